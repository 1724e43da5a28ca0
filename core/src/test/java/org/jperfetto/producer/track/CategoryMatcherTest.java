package org.jperfetto.producer.track;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.jperfetto.protos.TrackEventConfig;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Upstream's category rules, case by case (config fields are ';'-separated lists). */
class CategoryMatcherTest {
  @ParameterizedTest(name = "{0} tags=[{1}] enabled=[{2}] disabled=[{3}] enTags=[{4}] disTags=[{5}] -> {6}")
  @CsvSource(delimiter = '|', nullValues = "-", value = {
      // name   | tags       | enabled cats      | disabled cats | enabled tags | disabled tags | result
      "foo      | -          | -                 | -             | -            | -             | true",
      "foo      | slow       | -                 | -             | -            | -             | false",
      "foo      | debug      | -                 | -             | -            | -             | false",
      "foo      | slow       | foo               | -             | -            | -             | true",
      "foo      | slow       | -                 | -             | slow         | -             | true",
      "foo      | debug      | -                 | -             | slow         | -             | true",
      "foo      | slow       | -                 | -             | -            | other         | true",
      "foo      | other      | -                 | -             | -            | other         | false",
      "foo      | -          | -                 | *             | -            | -             | false",
      "foo      | -          | foo               | *             | -            | -             | true",
      "foo      | -          | *                 | foo           | -            | -             | false",
      "foo      | -          | fo*               | foo           | -            | -             | false",
      "foo      | -          | foo               | fo*           | -            | -             | true",
      "foo      | -          | fo*               | *             | -            | -             | true",
      "foo      | -          | *                 | fo*           | -            | -             | false",
      "bar      | -          | fo*               | *             | -            | -             | false",
      "foo      | slow       | *                 | -             | -            | -             | false",
      // tag rule wins in the exact pass
      "foo      | slow       | fo*               | -             | -            | -             | false",
      "foo      | tagx       | -                 | *             | tagx         | -             | true",
      "foo      | tagx       | -                 | foo           | tagx         | -             | false",
      "foo      | tagx       | -                 | -             | -            | tag*          | false",
      "foo      | tagx;slow  | -                 | -             | tagx         | -             | true",
      "foo.bar  | -          | foo.*;baz         | *             | -            | -             | true",
  })
  void rules(String name, String tags, String enabled, String disabled, String enabledTags, String disabledTags,
      boolean expected) {
    TrackEventConfig config = TrackEventConfig.newBuilder().addAllEnabledCategories(list(enabled))
        .addAllDisabledCategories(list(disabled)).addAllEnabledTags(list(enabledTags))
        .addAllDisabledTags(list(disabledTags)).build();
    assertEquals(expected, new CategoryMatcher(config).isEnabled(name, list(tags)));
  }

  private static List<String> list(String s) {
    return s == null ? List.of() : List.of(s.split(";"));
  }
}
