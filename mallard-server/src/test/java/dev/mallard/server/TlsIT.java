// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.server.config.AccessMode;
import dev.mallard.server.config.ServerConfig;
import dev.mallard.server.tls.TlsFiles;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Base64;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Both listeners over TLS with a self-signed certificate made by the JDK's keytool. */
class TlsIT {
    @TempDir
    Path dir;

    @Test
    void flightAndHttpServeOverTlsAndPlainHttpIsRefused() throws Exception {
        Path store = dir.resolve("server.p12");
        Process keytool = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(), "-genkeypair",
                "-alias", "mallard", "-keyalg", "RSA", "-keysize", "2048", "-dname", "CN=localhost", "-ext", "SAN=ip:127.0.0.1,dns:localhost",
                "-validity", "2", "-storetype", "PKCS12", "-keystore", store.toString(), "-storepass", "changeit", "-keypass", "changeit")
                .redirectErrorStream(true).start();
        assertThat(keytool.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(keytool.exitValue()).isZero();
        KeyStore keys = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            keys.load(in, "changeit".toCharArray());
        }
        Certificate certificate = keys.getCertificate("mallard");
        Path cert = dir.resolve("server.crt");
        Path key = dir.resolve("server.key");
        Files.writeString(cert, pem("CERTIFICATE", certificate.getEncoded()));
        Files.writeString(key, pem("PRIVATE KEY", keys.getKey("mallard", "changeit".toCharArray()).getEncoded()));

        ServerConfig plain = TestServers.config(dir.resolve("wh"), AccessMode.COMPLETE, Optional.empty());
        ServerConfig config = new ServerConfig(plain.warehouse(), plain.database(), plain.host(), plain.httpPort(), plain.httpMaxBodyBytes(),
                plain.flightPort(), Optional.of(new TlsFiles(cert, key)), plain.users(), plain.accessMode(), plain.secretKey(),
                plain.tokenExpiryMinutes(), plain.sessionLimits(), plain.fetchSize(), plain.queryTimeoutSeconds(), plain.startupScript());
        try (MallardServer server = MallardServer.start(config)) {
            Properties properties = new Properties();
            properties.put("user", TestServers.USER);
            properties.put("password", TestServers.PASSWORD);
            String url = "jdbc:arrow-flight-sql://127.0.0.1:" + server.flightPort() + "/?useEncryption=true&disableCertificateVerification=true";
            try (Connection connection = DriverManager.getConnection(url, properties); Statement statement = connection.createStatement();
                    ResultSet rs = statement.executeQuery("SELECT 'over tls' AS how")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(1)).isEqualTo("over tls");
            }

            KeyStore trusted = KeyStore.getInstance("PKCS12");
            trusted.load(null, null);
            trusted.setCertificateEntry("mallard", certificate);
            TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            trust.init(trusted);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, trust.getTrustManagers(), null);
            HttpClient https = HttpClient.newBuilder().sslContext(context).build();
            String basic = "Basic " + Base64.getEncoder().encodeToString((TestServers.USER + ":" + TestServers.PASSWORD).getBytes(StandardCharsets.UTF_8));
            HttpResponse<String> response = https.send(HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + server.httpPort() + "/v1/query?q=SELECT%201%20AS%20x"))
                    .header("Authorization", basic).header("Accept", "application/jsonl").build(), HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.body()).isEqualTo("{\"x\":1}\n");

            assertThatThrownBy(() -> HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + "/health"))
                    .timeout(java.time.Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString()))
                    .isInstanceOf(java.io.IOException.class);
        }
    }

    @Test
    void unreadableTlsFilesAreAConfigErrorNamingThem() throws Exception {
        Path cert = Files.writeString(dir.resolve("c.crt"), "not a certificate");
        Path key = Files.writeString(dir.resolve("k.key"), "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n");
        assertThatThrownBy(() -> new TlsFiles(cert, key).sslContext())
                .isInstanceOfSatisfying(dev.mallard.core.error.MallardException.class,
                        e -> assertThat(e.errorCode()).isEqualTo(dev.mallard.core.error.ErrorCode.USER_CONFIG_INVALID))
                .hasMessageContaining("tls.cert_file " + cert);
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }
}
