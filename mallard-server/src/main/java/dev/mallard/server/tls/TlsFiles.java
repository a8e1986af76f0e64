// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.tls;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

/**
 * The server's TLS material: a PEM certificate chain and a PEM PKCS#8 private key (RSA or EC), checked when read.
 * Flight reads the files itself; the HTTP listener gets an {@link SSLContext} built from them.
 */
public record TlsFiles(Path certFile, Path keyFile) {
    private static final List<String> KEY_ALGORITHMS = List.of("RSA", "EC", "Ed25519");

    public TlsFiles {
        requireNonNull(certFile, "certFile is null");
        requireNonNull(keyFile, "keyFile is null");
    }

    /** @throws MallardException {@code user.config.invalid} when a file is missing or does not hold what it should */
    public SSLContext sslContext() {
        try {
            List<? extends Certificate> chain = certificates();
            PrivateKey key = privateKey();
            char[] password = new char[0];
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(null, null);
            store.setKeyEntry("mallard", key, password, chain.toArray(Certificate[]::new));
            KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            keys.init(store, password);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(keys.getKeyManagers(), null, null);
            return context;
        } catch (GeneralSecurityException | IOException e) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "tls.cert_file " + certFile + " and tls.key_file " + keyFile
                    + " do not make a usable key and certificate: " + e.getMessage(), e);
        }
    }

    private List<? extends Certificate> certificates() throws IOException, GeneralSecurityException {
        try (InputStream in = Files.newInputStream(certFile)) {
            List<? extends Certificate> chain = List.copyOf(CertificateFactory.getInstance("X.509").generateCertificates(in));
            if (chain.isEmpty()) {
                throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "tls.cert_file " + certFile + " holds no PEM certificate");
            }
            return chain;
        }
    }

    private PrivateKey privateKey() throws IOException {
        String pem = Files.readString(keyFile, StandardCharsets.US_ASCII);
        int begin = pem.indexOf("-----BEGIN PRIVATE KEY-----");
        int end = pem.indexOf("-----END PRIVATE KEY-----");
        if (begin < 0 || end < begin) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "tls.key_file " + keyFile
                    + " is not a PEM PKCS#8 private key (BEGIN PRIVATE KEY); convert it with: openssl pkcs8 -topk8 -nocrypt -in key.pem");
        }
        byte[] der = Base64.getMimeDecoder().decode(pem.substring(begin + "-----BEGIN PRIVATE KEY-----".length(), end));
        for (String algorithm : KEY_ALGORITHMS) {
            try {
                return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
            } catch (GeneralSecurityException e) {
                // try the next algorithm
            }
        }
        throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "tls.key_file " + keyFile + " holds a key that is not RSA, EC or Ed25519");
    }
}
