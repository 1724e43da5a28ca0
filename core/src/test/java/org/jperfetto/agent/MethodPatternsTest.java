package org.jperfetto.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class MethodPatternsTest {
  @Test
  void oneMethodOfOneClass() {
    MethodPatterns p = MethodPatterns.parse(List.of("com.shop.Cart#add"));
    assertTrue(p.matches("com.shop.Cart", "add"));
    assertFalse(p.matches("com.shop.Cart", "addAll"));
    assertFalse(p.matches("com.shop.CartView", "add"));
    assertTrue(p.matchesClass("com.shop.Cart"));
    assertFalse(p.matchesClass("com.shop.Order"));
  }

  @Test
  void wildcardsInClassAndMethod() {
    MethodPatterns p = MethodPatterns.parse(List.of("com.shop.db.*#query*"));
    assertTrue(p.matches("com.shop.db.Orders", "queryAll"));
    assertTrue(p.matches("com.shop.db.sql.Orders$Cursor", "query"), "* crosses packages and nesting");
    assertFalse(p.matches("com.shop.db.Orders", "update"));
    assertFalse(p.matches("com.shop.Orders", "query"));
  }

  @Test
  void aClassAloneMeansItsMethodsButNotConstructorsOrInitializers() {
    MethodPatterns p = MethodPatterns.parse(List.of("com.shop.Cart"));
    assertTrue(p.matches("com.shop.Cart", "add"));
    assertFalse(p.matches("com.shop.Cart", "<init>"));
    assertFalse(p.matches("com.shop.Cart", "<clinit>"));
    MethodPatterns ctor = MethodPatterns.parse(List.of("com.shop.Cart#<init>"));
    assertTrue(ctor.matches("com.shop.Cart", "<init>"));
    assertFalse(ctor.matches("com.shop.Cart", "add"));
  }

  @Test
  void regexCharactersAreLiteral() {
    MethodPatterns p = MethodPatterns.parse(List.of("a.B$C#run"));
    assertTrue(p.matches("a.B$C", "run"));
    assertFalse(p.matches("aXB$C", "run"), "a dot is a dot");
  }

  @Test
  void aSessionsLegacyConfigListsPatternsWithAnySeparator() {
    MethodPatterns p = MethodsDataSource.parse(" a.B#c\n d.E+f.G, h.I\n");
    assertEquals(List.of("a.B#c", "d.E", "f.G", "h.I"), p.entries().stream().map(MethodPatterns.Entry::text).toList());
    assertTrue(MethodsDataSource.parse("").isEmpty());
  }

  @Test
  void malformedPatternsAreRefused() {
    for (String bad : List.of("#run", "a.B#", "a.B#x#y", "a.B#run()", "a b")) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> MethodPatterns.parse(List.of(bad)), bad);
      assertTrue(e.getMessage().contains("\"" + bad + "\""), e.getMessage());
    }
  }
}
