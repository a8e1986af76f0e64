// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.handler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class SchemaInferenceTest {
    private final SchemaInference inference = new SchemaInference();

    private List<Column> infer(String... lines) {
        for (int i = 0; i < lines.length; i++) {
            inference.add(lines[i].getBytes(StandardCharsets.UTF_8), "line " + (i + 1));
        }
        return inference.columns();
    }

    private MallardException failure(String... lines) {
        Throwable thrown = org.assertj.core.api.Assertions.catchThrowable(() -> infer(lines));
        assertThat(thrown).isInstanceOf(MallardException.class);
        MallardException e = (MallardException) thrown;
        assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_HANDLER_PARSE_FAILED);
        return e;
    }

    private static Column col(String name, String type) {
        return new Column(name, type);
    }

    @Test
    void scalarsMapToDuckDbTypes() {
        assertThat(infer("{\"b\":true,\"i\":1,\"d\":1.5,\"s\":\"x\",\"e\":1e3}")).containsExactly(
                col("b", "BOOLEAN"), col("i", "BIGINT"), col("d", "DOUBLE"), col("s", "VARCHAR"), col("e", "DOUBLE"));
    }

    @Test
    void topLevelColumnsAndOrderComeFromTheFirstMessage() {
        assertThat(infer("{\"b\":1,\"a\":2}", "{\"a\":3,\"c\":4,\"b\":5}", "{\"d\":null}"))
                .containsExactly(col("b", "BIGINT"), col("a", "BIGINT"));
        assertThat(inference.droppedTopLevelKeys()).containsExactly("c", "d");
    }

    @Test
    void droppedTopLevelKeysAreNotTypeChecked() {
        assertThat(infer("{\"a\":1}", "{\"a\":2,\"x\":\"s\"}", "{\"a\":3,\"x\":{\"y\":1}}"))
                .containsExactly(col("a", "BIGINT"));
        assertThat(inference.droppedTopLevelKeys()).containsExactly("x");
    }

    @Test
    void nestedFieldSeenOnlyInALaterMessageIsAField() {
        assertThat(infer("{\"p\":{\"city\":\"NY\"}}", "{\"p\":{\"zip\":10001}}", "{\"p\":{\"city\":\"B\",\"geo\":{\"lat\":1.5}}}"))
                .containsExactly(col("p", "STRUCT(\"city\" VARCHAR, \"zip\" BIGINT, \"geo\" STRUCT(\"lat\" DOUBLE))"));
    }

    @Test
    void integerWidensToDoubleAcrossTheBatch() {
        assertThat(infer("{\"n\":1}", "{\"n\":2.5}")).containsExactly(col("n", "DOUBLE"));
        inference.reset();
        assertThat(infer("{\"n\":2.5}", "{\"n\":1}")).containsExactly(col("n", "DOUBLE"));
    }

    @Test
    void integerBeyondInt64IsHugeint() {
        assertThat(infer("{\"n\":1}", "{\"n\":9223372036854775808}")).containsExactly(col("n", "HUGEINT"));
        inference.reset();
        assertThat(infer("{\"n\":-9223372036854775808}")).containsExactly(col("n", "BIGINT"));
        inference.reset();
        assertThat(infer("{\"n\":-9223372036854775809}")).containsExactly(col("n", "HUGEINT"));
    }

    @Test
    void hugeintJoinedWithDoubleIsDouble() {
        assertThat(infer("{\"n\":99999999999999999999}", "{\"n\":0.5}")).containsExactly(col("n", "DOUBLE"));
    }

    @Test
    void integerBeyondHugeintIsDouble() {
        assertThat(infer("{\"n\":" + "9".repeat(40) + "}")).containsExactly(col("n", "DOUBLE"));
    }

    @Test
    void nullJoinsWithAnything() {
        assertThat(infer("{\"a\":null,\"b\":{\"c\":null}}", "{\"a\":\"x\",\"b\":null}", "{\"a\":null,\"b\":{\"c\":[1]}}"))
                .containsExactly(col("a", "VARCHAR"), col("b", "STRUCT(\"c\" BIGINT[])"));
    }

    @Test
    void fieldThatIsOnlyEverNullIsJson() {
        assertThat(infer("{\"a\":null,\"b\":{\"c\":null}}", "{\"a\":null}"))
                .containsExactly(col("a", "JSON"), col("b", "STRUCT(\"c\" JSON)"));
    }

    @Test
    void listThatIsAlwaysEmptyIsAListOfJson() {
        assertThat(infer("{\"a\":[]}", "{\"a\":[null]}")).containsExactly(col("a", "JSON[]"));
    }

    @Test
    void objectThatNeverHasAKeyIsJson() {
        assertThat(infer("{\"a\":{},\"b\":[{}]}", "{\"a\":{}}")).containsExactly(col("a", "JSON"), col("b", "JSON[]"));
    }

    @Test
    void listElementTypesAreJoined() {
        assertThat(infer("{\"a\":[1,2.5],\"b\":[[1],[null,2]],\"c\":[{\"x\":1},{\"y\":\"s\"}]}", "{\"a\":[],\"b\":[[3.5]]}"))
                .containsExactly(col("a", "DOUBLE[]"), col("b", "DOUBLE[][]"),
                        col("c", "STRUCT(\"x\" BIGINT, \"y\" VARCHAR)[]"));
    }

    @Test
    void structFieldNamesAreAlwaysQuotedWithQuotesDoubled() {
        assertThat(infer("{\"p\":{\"b c\":1,\"q\\\"t\":2,\"Mixed\":3}}"))
                .containsExactly(col("p", "STRUCT(\"b c\" BIGINT, \"q\"\"t\" BIGINT, \"Mixed\" BIGINT)"));
    }

    @Test
    void stringAfterIntegerFailsNamingFieldAndLine() {
        MallardException e = failure("{\"properties\":{\"city\":1}}", "{\"properties\":{}}", "{\"properties\":{\"city\":\"NY\"}}");
        assertThat(e.getMessage())
                .contains("line 3")
                .contains("properties.city")
                .contains("BIGINT")
                .contains("line 1")
                .contains("make the type of 'properties.city' consistent")
                .contains("handlers.StructuredBatch");
    }

    @Test
    void boolAndNumberConflict() {
        assertThat(failure("{\"a\":true}", "{\"a\":1}").getMessage()).contains("line 2").contains("'a' is BIGINT here but was BOOLEAN");
    }

    @Test
    void objectAndScalarConflict() {
        assertThat(failure("{\"a\":{\"b\":1}}", "{\"a\":\"x\"}").getMessage()).contains("'a' is VARCHAR here but was an object");
        inference.reset();
        assertThat(failure("{\"a\":\"x\"}", "{\"a\":{}}").getMessage()).contains("'a' is an object here but was VARCHAR");
    }

    @Test
    void listAndScalarConflict() {
        assertThat(failure("{\"a\":[1]}", "{\"a\":1}").getMessage()).contains("'a' is BIGINT here but was a list");
    }

    @Test
    void conflictInsideAListNamesTheElementPath() {
        assertThat(failure("{\"items\":[{\"price\":1},{\"price\":\"x\"}]}").getMessage())
                .contains("line 1").contains("'items[].price' is VARCHAR here but was BIGINT");
    }

    @Test
    void messageThatIsNotJsonFailsNamingWhere() {
        assertThat(failure("{\"a\":1}", "not json").getMessage()).contains("line 2").contains("not valid JSON");
        inference.reset();
        assertThat(failure("{\"a\":1", "{}").getMessage()).contains("line 1").contains("not valid JSON");
    }

    @Test
    void messageWhoseTopLevelIsNotAnObjectFailsNamingWhere() {
        assertThat(failure("{\"a\":1}", "[1,2]").getMessage()).contains("line 2").contains("array, not an object");
        inference.reset();
        assertThat(failure("\"s\"").getMessage()).contains("line 1").contains("string, not an object");
    }

    @Test
    void trailingContentAfterTheObjectFails() {
        assertThat(failure("{\"a\":1} {\"a\":2}").getMessage()).contains("line 1").contains("more after its JSON object");
    }

    @Test
    void nestedFieldsDifferingOnlyInCaseFailBecauseDuckDbStructsIgnoreCase() {
        assertThat(failure("{\"p\":{\"city\":\"a\"}}", "{\"p\":{\"City\":\"b\"}}").getMessage())
                .contains("line 2").contains("'p.City'").contains("'city'").contains("only in case");
    }

    @Test
    void blankLinesAreSkipped() {
        assertThat(infer("", "  \t\r\n", "{\"a\":1}", " ")).containsExactly(col("a", "BIGINT"));
    }

    @Test
    void whereStringIsUsedAsGiven() {
        inference.add("{\"a\":1}".getBytes(StandardCharsets.UTF_8), "events[2]@17");
        assertThatThrownBy(() -> inference.add("{\"a\":\"x\"}".getBytes(StandardCharsets.UTF_8), "events[2]@18"))
                .hasMessageContaining("events[2]@18").hasMessageContaining("first at events[2]@17");
    }

    @Test
    void resetStartsANewBatch() {
        infer("{\"a\":1}", "{\"b\":1}");
        inference.reset();
        assertThat(infer("{\"c\":\"x\"}")).containsExactly(col("c", "VARCHAR"));
        assertThat(inference.droppedTopLevelKeys()).isEmpty();
    }

    @Test
    void noMessagesMeanNoColumns() {
        assertThat(inference.columns()).isEmpty();
    }
}
