// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.arrow;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.util.Locale;
import java.util.Map;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * The Arrow extension type a field declares, if any: either through the field metadata (what the C data
 * import leaves when no Java class is registered for the extension) or through a registered
 * {@link ArrowType.ExtensionType}. DuckDB names its own types inside {@code arrow.opaque} metadata
 * ({@code {"type_name":"hugeint","vendor_name":"DuckDB"}}).
 *
 * @param name the extension name, such as {@code arrow.json}, or null when the field has none
 * @param duckDbType DuckDB's type name for an {@code arrow.opaque} field from DuckDB, lower case, or null
 */
public record ArrowExtension(String name, String duckDbType) {
    static final String NAME_KEY = "ARROW:extension:name";
    static final String METADATA_KEY = "ARROW:extension:metadata";
    static final String JSON = "arrow.json";
    static final String UUID = "arrow.uuid";
    static final String OPAQUE = "arrow.opaque";
    // Arrow's canonical boolean stored one byte per value; DuckDB exports BOOLEAN so under lossless conversion.
    static final String BOOL8 = "arrow.bool8";
    private static final ArrowExtension NONE = new ArrowExtension(null, null);

    /** The extension {@code field} declares; both components null when it declares none. */
    public static ArrowExtension of(Field field) {
        if (field.getType() instanceof ArrowType.ExtensionType extension) {
            return of(extension.extensionName(), extension.serialize());
        }
        Map<String, String> metadata = field.getMetadata();
        String name = metadata == null ? null : metadata.get(NAME_KEY);
        return name == null ? NONE : of(name, metadata.get(METADATA_KEY));
    }

    private static ArrowExtension of(String name, String metadata) {
        return new ArrowExtension(name, OPAQUE.equals(name) ? duckDbTypeName(metadata) : null);
    }

    public boolean isJson() {
        return JSON.equals(name) || "json".equals(duckDbType);
    }

    public boolean isBool8() {
        return BOOL8.equals(name);
    }

    public boolean isUuid() {
        return UUID.equals(name) || "uuid".equals(duckDbType);
    }

    // Reads {"type_name": ..., "vendor_name": "DuckDB"}; anything else (another vendor, bad JSON) is not DuckDB's.
    private static String duckDbTypeName(String metadata) {
        if (metadata == null || metadata.isBlank()) {
            return null;
        }
        String typeName = null;
        String vendor = null;
        try (JsonParser parser = new JsonFactory().createParser(metadata)) {
            if (parser.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            while (parser.nextToken() == JsonToken.FIELD_NAME) {
                String key = parser.currentName();
                JsonToken value = parser.nextToken();
                if (value == JsonToken.VALUE_STRING && "type_name".equals(key)) {
                    typeName = parser.getText();
                } else if (value == JsonToken.VALUE_STRING && "vendor_name".equals(key)) {
                    vendor = parser.getText();
                } else {
                    parser.skipChildren();
                }
            }
        } catch (IOException e) {
            return null;
        }
        return typeName != null && "duckdb".equalsIgnoreCase(vendor) ? typeName.toLowerCase(Locale.ROOT) : null;
    }
}
