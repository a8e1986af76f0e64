// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.kafka;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serializer;
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
                // An unencrypted key has no password: SQLFlow (librdkafka) ignores key_password then, while Kafka's Java
                // client would try to decrypt the key with it and fail. An encrypted key was refused above.
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

    /** A consumer of these properties; a setting the client refuses is a user error naming the config key. */
    public static <K, V> KafkaConsumer<K, V> consumer(Properties properties, JsonNode block, String where,
            Deserializer<K> keys, Deserializer<V> values) {
        try {
            return new KafkaConsumer<>(properties, keys, values);
        } catch (KafkaException e) {
            throw refused(e, block, where);
        }
    }

    /** A producer of these properties; a setting the client refuses is a user error naming the config key. */
    public static <K, V> KafkaProducer<K, V> producer(Properties properties, JsonNode block, String where,
            Serializer<K> keys, Serializer<V> values) {
        try {
            return new KafkaProducer<>(properties, keys, values);
        } catch (KafkaException e) {
            throw refused(e, block, where);
        }
    }

    // Kafka's property names, most specific first, and the config keys they come from.
    private static final List<Map.Entry<String, String>> KEYS = List.of(
            Map.entry("truststore", "ssl.ca_location"),
            Map.entry("certificate", "ssl.certificate_location"),
            Map.entry("keystore", "ssl.certificate_location and ssl.key_location"),
            Map.entry("key.password", "ssl.key_location"),
            Map.entry("private key", "ssl.key_location"),
            Map.entry("sasl", "sasl"),
            Map.entry("jaas", "sasl"),
            Map.entry("ssl", "ssl"),
            Map.entry("security.protocol", "security_protocol"),
            Map.entry("bootstrap", "brokers"));

    private static MallardException refused(KafkaException e, JsonNode block, String where) {
        StringBuilder causes = new StringBuilder();
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause.getMessage() != null && !causes.toString().contains(cause.getMessage())) {
                causes.append(causes.isEmpty() ? "" : ": ").append(cause.getMessage());
            }
        }
        String text = redact(causes.toString(), block);
        String lower = text.toLowerCase(java.util.Locale.ROOT);
        String key = KEYS.stream().filter(entry -> lower.contains(entry.getKey())).map(Map.Entry::getValue).findFirst().orElse("");
        return new MallardException(ErrorCode.USER_CONFIG_INVALID, (key.isEmpty() ? where : where + "." + key)
                + ": the Kafka client refuses this setting: " + text + "; check the file it names and its format (PEM)", e);
    }

    private static String redact(String text, JsonNode block) {
        String redacted = text;
        for (String secret : List.of(block.path("sasl").path("password").asText(""), block.path("ssl").path("key_password").asText(""))) {
            if (!secret.isEmpty()) {
                redacted = redacted.replace(secret, "***");
            }
        }
        return redacted;
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
