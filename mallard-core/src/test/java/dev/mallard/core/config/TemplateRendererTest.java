// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.core.error.ErrorCode;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TemplateRendererTest {
    private static TemplateRenderer.Rendered render(Map<String, String> env, String template) {
        return new TemplateRenderer(ConfigEnvironment.from(env)).render("p.yml", template);
    }

    @Test
    void suppliedVariablesAndDefaultsRender() {
        TemplateRenderer.Rendered rendered = render(Map.of("SQLFLOW_BROKERS", "k:9092", "MALLARD_SIZE", "7"),
                "a: {{ SQLFLOW_BROKERS }}\nb: {{ MALLARD_SIZE|default(1) }}\nc: {{ SQLFLOW_OTHER|default('x') }}");
        assertThat(rendered.text()).isEqualTo("a: k:9092\nb: 7\nc: x");
        assertThat(rendered.errors()).isEmpty();
    }

    @Test
    void onlyMallardAndSqlflowVariablesAreInTheContext() {
        TemplateRenderer.Rendered rendered = render(Map.of("HOME", "/root", "SQLFLOW_A", "1"), "h: '{{ HOME }}'");
        assertThat(rendered.text()).isEqualTo("h: ''");
    }

    @Test
    void portIsInTheContextWhenSetAsAPaasSetsIt() {
        TemplateRenderer.Rendered rendered = render(Map.of("PORT", "9123", "HOST", "h"), "addr: \"0.0.0.0:{{ PORT }}\"");
        assertThat(rendered.text()).isEqualTo("addr: \"0.0.0.0:9123\"");
        assertThat(rendered.errors()).isEmpty();
        assertThat(rendered.warnings()).isEmpty();
    }

    @Test
    void anUnsetPortRendersEmptyWithAWarningOrTakesItsDefault() {
        TemplateRenderer.Rendered unset = render(Map.of(), "addr: \"0.0.0.0:{{ PORT }}\"");
        assertThat(unset.text()).isEqualTo("addr: \"0.0.0.0:\"");
        assertThat(unset.warnings()).singleElement().satisfies(warning -> assertThat(warning.message()).contains("PORT"));
        assertThat(render(Map.of(), "addr: \"0.0.0.0:{{ PORT|default('8001') }}\"").text()).isEqualTo("addr: \"0.0.0.0:8001\"");
    }

    @Test
    void staticRootAndResultsCacheDirHaveDefaultsAndFollowTheEnvironment() {
        assertThat(render(Map.of(), "{{ STATIC_ROOT }} {{ SQL_RESULTS_CACHE_DIR }}").text())
                .isEqualTo("/tmp/mallard/static /tmp/mallard/resultscache");
        assertThat(render(Map.of("SQLFLOW_STATIC_ROOT", "/srv/static"), "{{ STATIC_ROOT }}").text()).isEqualTo("/srv/static");
        assertThat(render(Map.of("MALLARD_STATIC_ROOT", "/m", "SQLFLOW_STATIC_ROOT", "/s"), "{{ STATIC_ROOT }}").text()).isEqualTo("/m");
    }

    @Test
    void anUnsetVariableThatIsReadWarnsWithItsLine() {
        TemplateRenderer.Rendered rendered = render(Map.of(), "pipeline:\n  x: {{ SQLFLOW_MISSING }}\n");
        assertThat(rendered.errors()).isEmpty();
        assertThat(rendered.warnings()).singleElement().satisfies(warning -> {
            assertThat(warning.code()).isEqualTo(ErrorCode.USER_CONFIG_TEMPLATE_UNDEFINED);
            assertThat(warning.line()).isEqualTo(2);
            assertThat(warning.column()).isEqualTo(9);
            assertThat(warning.message()).contains("SQLFLOW_MISSING");
        });
    }

    @Test
    void anUnsetVariableWithASimilarSuppliedNameThatIsNeverReadFailsWithDidYouMean() {
        TemplateRenderer.Rendered rendered = render(Map.of("SQLFLOW_KAFKA_BROKER", "k:9092"),
                "brokers: [{{ SQLFLOW_KAFKA_BROKERS|default('localhost:9092') }}]");
        assertThat(rendered.errors()).singleElement().satisfies(error -> {
            assertThat(error.code()).isEqualTo(ErrorCode.USER_CONFIG_TEMPLATE_UNDEFINED);
            assertThat(error.message()).contains("SQLFLOW_KAFKA_BROKERS").contains("did you mean SQLFLOW_KAFKA_BROKER");
        });
    }

    @Test
    void aSimilarNameThatIsAlsoReadIsNotASuggestion() {
        TemplateRenderer.Rendered rendered = render(Map.of("SQLFLOW_TOPIC", "t"), "a: {{ SQLFLOW_TOPIC }}\nb: {{ SQLFLOW_TOPICS }}");
        assertThat(rendered.errors()).isEmpty();
        assertThat(rendered.warnings()).hasSize(1);
    }

    @Test
    void anUnsetVariableWithADefaultOrOnlyTestedDoesNotWarn() {
        TemplateRenderer.Rendered rendered = render(Map.of(),
                "a: {{ SQLFLOW_A|default('x') }}\nb: {{ SQLFLOW_B | d(1) }}\n{% if SQLFLOW_C %}c: 1{% endif %}\n{% if SQLFLOW_D is defined %}d: 1{% endif %}");
        assertThat(rendered.warnings()).isEmpty();
        assertThat(rendered.text()).isEqualTo("a: x\nb: 1\n\n");
    }

    @Test
    void aVariableWithADefaultInOnePlaceButNotAnotherStillWarns() {
        assertThat(render(Map.of(), "a: {{ SQLFLOW_A|default('x') }}\nb: {{ SQLFLOW_A }}").warnings()).hasSize(1);
    }

    @Test
    void aBrokenTemplateIsAnError() {
        TemplateRenderer.Rendered rendered = render(Map.of(), "a: {% if %}");
        assertThat(rendered.errors()).isNotEmpty().allSatisfy(error ->
                assertThat(error.code()).isEqualTo(ErrorCode.USER_CONFIG_TEMPLATE_INVALID));
    }

    @Test
    void editDistanceCountsSingleEdits() {
        assertThat(TemplateRenderer.distance("SQLFLOW_A", "SQLFLOW_A")).isZero();
        assertThat(TemplateRenderer.distance("BROKER", "BROKERS")).isEqualTo(1);
        assertThat(TemplateRenderer.distance("abc", "xyz")).isEqualTo(3);
    }
}
