package dev.mallard.flow.kafka;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.config.SslConfigs;

/**
 * Translates a config's Kafka block (brokers, security_protocol, ssl, sasl: SQLFlow's keys) into
 * kafka-clients properties, shared by the source and the sink. Faults are found here, at startup.
 */
public final class KafkaClientSettings {
    private KafkaClientSettings() {}

    public static List<String> brokers(JsonNode block) {
        List<String> brokers = new ArrayList<>();
        for (JsonNode broker : block.path("brokers")) {
            for (String part : broker.asText().split(",")) {
                if (!part.isBlank()) {
                    brokers.add(part.strip());
                }
            }
        }
        if (brokers.isEmpty()) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "kafka.brokers is empty; give at least one host:port "
                    + "(an unset template variable renders empty: check SQLFLOW_KAFKA_BROKERS)");
        }
        return brokers;
    }

    /** Connection and security properties for a client of the brokers in {@code block}. */
    public static Properties common(JsonNode block, String where) {
        Properties properties = new Properties();
        properties.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, String.join(",", brokers(block)));
        String protocol = block.path("security_protocol").asText("PLAINTEXT");
        properties.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, protocol);
        JsonNode ssl = block.path("ssl");
        if (ssl.isObject()) {
            text(ssl, "ca_location").ifPresent(ca -> {
                properties.put(SslConfigs.SSL_TRUSTSTORE_TYPE_CONFIG, "PEM");
                properties.put(SslConfigs.SSL_TRUSTSTORE_LOCATION_CONFIG, readable(ca, where + ".ssl.ca_location"));
            });
            var certificate = text(ssl, "certificate_location");
            var key = text(ssl, "key_location");
            if (certificate.isPresent() != key.isPresent()) {
                throw new MallardException(ErrorCode.USER_CONFIG_INVALID, where + ".ssl: certificate_location and key_location go together (mutual TLS needs both)");
            }
            if (certificate.isPresent()) {
                String keyPem = read(key.get(), where + ".ssl.key_location");
                if (keyPem.contains("ENCRYPTED")) {
                    throw new MallardException(ErrorCode.USER_CONFIG_UNSUPPORTED, where + ".ssl.key_location " + key.get()
                            + " is an encrypted private key; convert it once with `openssl pkcs8 -topk8 -nocrypt -in "
                            + key.get() + " -out client.key.pem` and point key_location at the result");
                }
                properties.put(SslConfigs.SSL_KEYSTORE_TYPE_CONFIG, "PEM");
                properties.put(SslConfigs.SSL_KEYSTORE_CERTIFICATE_CHAIN_CONFIG, read(certificate.get(), where + ".ssl.certificate_location"));
                properties.put(SslConfigs.SSL_KEYSTORE_KEY_CONFIG, keyPem);
                text(ssl, "key_password").ifPresent(password -> properties.put(SslConfigs.SSL_KEY_PASSWORD_CONFIG, password));
            }
            if ("none".equals(ssl.path("endpoint_identification_algorithm").asText())) {
                properties.put(SslConfigs.SSL_ENDPOINT_IDENTIFICATION_ALGORITHM_CONFIG, "");
            }
        }
        JsonNode sasl = block.path("sasl");
        if (sasl.isObject()) {
            String mechanism = sasl.path("mechanism").asText();
            String module = switch (mechanism) {
                case "PLAIN" -> "org.apache.kafka.common.security.plain.PlainLoginModule";
                case "SCRAM-SHA-256", "SCRAM-SHA-512" -> "org.apache.kafka.common.security.scram.ScramLoginModule";
                default -> throw new MallardException(ErrorCode.USER_CONFIG_UNSUPPORTED, where + ".sasl.mechanism " + mechanism
                        + " is not supported; use PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512");
            };
            properties.put(SaslConfigs.SASL_MECHANISM, mechanism);
            properties.put(SaslConfigs.SASL_JAAS_CONFIG, module + " required username=\"" + jaasEscape(sasl.path("username").asText())
                    + "\" password=\"" + jaasEscape(sasl.path("password").asText()) + "\";");
        }
        return properties;
    }

    private static String jaasEscape(String value) {
        return value.replace("\\", "\\\\").replace("\"", "\\\"");
    }

    private static java.util.Optional<String> text(JsonNode node, String key) {
        String value = node.path(key).asText("");
        return value.isBlank() ? java.util.Optional.empty() : java.util.Optional.of(value);
    }

    private static String readable(String path, String key) {
        if (!Files.isReadable(Path.of(path))) {
            throw new MallardException(ErrorCode.USER_CONFIG_NOT_FOUND, key + ": " + path + " does not exist or cannot be read");
        }
        return path;
    }

    private static String read(String path, String key) {
        try {
            return Files.readString(Path.of(readable(path, key)));
        } catch (IOException e) {
            throw new MallardException(ErrorCode.USER_CONFIG_NOT_FOUND, key + ": cannot read " + path + ": " + e.getMessage());
        }
    }
}
