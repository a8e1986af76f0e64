// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.source.webhook;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Splits a webhook body into events: one JSON object, or several (JSONL, or objects separated by any white
 * space, a pretty-printed object included). Each event keeps its exact bytes.
 */
final class JsonEvents {
    private static final JsonFactory FACTORY = JsonFactory.builder().build();

    private JsonEvents() {}

    /** Why a body was refused, for a 400 answer. */
    static final class BadBody extends Exception {
        BadBody(String message) {
            super(message);
        }
    }

    static List<byte[]> split(byte[] body) throws BadBody {
        List<byte[]> events = new ArrayList<>();
        try (JsonParser parser = FACTORY.createParser(body)) {
            JsonToken token;
            while ((token = parser.nextToken()) != null) {
                if (token != JsonToken.START_OBJECT) {
                    throw new BadBody("event " + (events.size() + 1) + " is a JSON " + describe(token)
                            + ", not an object; send one JSON object or one object per line (JSONL)");
                }
                int start = (int) parser.currentTokenLocation().getByteOffset();
                parser.skipChildren();
                int end = (int) parser.currentLocation().getByteOffset();
                events.add(Arrays.copyOfRange(body, start, end));
            }
        } catch (JsonProcessingException e) {
            throw new BadBody("the body is not JSON at event " + (events.size() + 1) + ": " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new BadBody("the body could not be read: " + e.getMessage());
        }
        if (events.isEmpty()) {
            throw new BadBody("the body holds no JSON object; send one JSON object or one object per line (JSONL)");
        }
        return events;
    }

    private static String describe(JsonToken token) {
        return switch (token) {
            case START_ARRAY -> "array";
            case VALUE_STRING -> "string";
            case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> "number";
            case VALUE_TRUE, VALUE_FALSE -> "boolean";
            case VALUE_NULL -> "null";
            default -> token.name();
        };
    }
}
