// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KafkaClientSettingsTest {
    @TempDir
    Path dir;

    private static JsonNode json(String text) throws Exception {
        return new ObjectMapper().readTree(text);
    }

    @Test
    void brokersMayBeAListOrACommaSeparatedString() throws Exception {
        assertThat(KafkaClientSettings.brokers(json("{\"brokers\":[\"a:9092\",\"b:9092, c:9092\"]}"))).containsExactly("a:9092", "b:9092", "c:9092");
    }

    @Test
    void anEmptyBrokerListNamesTheLikelyUnsetVariable() {
        assertThatThrownBy(() -> KafkaClientSettings.brokers(json("{\"brokers\":[\"\"]}")))
                .hasMessageContaining("SQLFLOW_KAFKA_BROKERS");
    }

    @Test
    void scramOverTlsBecomesAJaasConfigAndPemStores() throws Exception {
        Path ca = Files.writeString(dir.resolve("ca.pem"), "-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n");
        Properties properties = KafkaClientSettings.common(json("""
                {"brokers":["b:9093"],"security_protocol":"SASL_SSL",
                 "sasl":{"mechanism":"SCRAM-SHA-512","username":"app","password":"p\\"w"},
                 "ssl":{"ca_location":"%s","endpoint_identification_algorithm":"none"}}""".formatted(ca)), "pipeline.source.kafka");
        assertThat(properties.getProperty("security.protocol")).isEqualTo("SASL_SSL");
        assertThat(properties.getProperty("sasl.mechanism")).isEqualTo("SCRAM-SHA-512");
        assertThat(properties.getProperty("sasl.jaas.config"))
                .isEqualTo("org.apache.kafka.common.security.scram.ScramLoginModule required username=\"app\" password=\"p\\\"w\";");
        assertThat(properties.getProperty("ssl.truststore.type")).isEqualTo("PEM");
        assertThat(properties.getProperty("ssl.truststore.location")).isEqualTo(ca.toString());
        assertThat(properties.getProperty("ssl.endpoint.identification.algorithm")).isEmpty();
    }

    @Test
    void anEncryptedPemKeyIsRefusedWithTheCommandThatConvertsIt() throws Exception {
        Path cert = Files.writeString(dir.resolve("client.pem"), "-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n");
        Path key = Files.writeString(dir.resolve("client.key"), "-----BEGIN ENCRYPTED PRIVATE KEY-----\nx\n-----END ENCRYPTED PRIVATE KEY-----\n");
        assertThatThrownBy(() -> KafkaClientSettings.common(json("""
                {"brokers":["b:9093"],"security_protocol":"SSL","ssl":{"certificate_location":"%s","key_location":"%s"}}""".formatted(cert, key)),
                "pipeline.source.kafka"))
                .isInstanceOf(MallardException.class)
                .hasMessageContaining("openssl pkcs8 -topk8 -nocrypt")
                .satisfies(e -> assertThat(((MallardException) e).errorCode()).isEqualTo(ErrorCode.USER_CONFIG_UNSUPPORTED));
    }

    @Test
    void aMissingCaFileIsNamed() {
        assertThatThrownBy(() -> KafkaClientSettings.common(json("{\"brokers\":[\"b:9093\"],\"ssl\":{\"ca_location\":\"/nonexistent/ca.pem\"}}"), "pipeline.sink.kafka"))
                .hasMessageContaining("pipeline.sink.kafka.ssl.ca_location").hasMessageContaining("/nonexistent/ca.pem");
    }

    private static Path resource(String name) throws Exception {
        return Path.of(KafkaClientSettingsTest.class.getResource("/tls/" + name).toURI());
    }

    private static String saslTlsBlock(Path cert, String keyPassword) throws Exception {
        // SQLFlow's kafka.sasl-tls.yml: an unencrypted PKCS#8 key in a file with OpenSSL's "Bag Attributes", and a key_password.
        return """
                {"brokers":["127.0.0.1:1"],"group_id":"g","topics":["t"],"security_protocol":"SASL_SSL",
                 "ssl":{"ca_location":"%s","key_location":"%s","certificate_location":"%s","key_password":"%s",
                        "endpoint_identification_algorithm":"none"},
                 "sasl":{"mechanism":"PLAIN","username":"user","password":"bitnami"}}""".formatted(
                resource("ca-cert.pem"), resource("client-key.pem"), cert, keyPassword);
    }

    @Test
    void sqlflowsSaslTlsExampleBuildsAConsumerAndAProducer() throws Exception {
        JsonNode block = json(saslTlsBlock(resource("client-cert.pem"), "testpass"));
        try (var source = new dev.mallard.flow.source.KafkaSource(block, 10, partition -> java.util.Optional.empty());
                var allocator = new org.apache.arrow.memory.RootAllocator();
                var sink = new dev.mallard.flow.sink.KafkaSink(json(saslTlsBlock(resource("client-cert.pem"), "testpass")),
                        json("{}"), allocator)) {
            assertThat(source.toString()).isEqualTo("pipeline.source.kafka");
        }
    }

    @Test
    void aCertificateTheClientCannotLoadIsACodedUserErrorNamingTheKey() throws Exception {
        Path broken = Files.writeString(dir.resolve("client-cert.pem"), "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n");
        JsonNode block = json(saslTlsBlock(broken, "testpass"));
        assertThatThrownBy(() -> new dev.mallard.flow.source.KafkaSource(block, 10, partition -> java.util.Optional.empty()).close())
                .isInstanceOf(MallardException.class)
                .satisfies(e -> assertThat(((MallardException) e).errorCode()).isEqualTo(ErrorCode.USER_CONFIG_INVALID))
                .hasMessageContaining("pipeline.source.kafka.ssl.certificate_location")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("bitnami").doesNotContain("testpass"));
    }

    @Test
    void thePasswordNeverAppearsInAnError() throws Exception {
        assertThatThrownBy(() -> KafkaClientSettings.common(json("""
                {"brokers":["b:9093"],"sasl":{"mechanism":"GSSAPI","username":"app","password":"hunter2"}}"""), "pipeline.source.kafka"))
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("hunter2"));
    }
}
