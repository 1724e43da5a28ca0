package org.jperfetto.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AgentOptionsTest {
  @TempDir Path dir;

  @Test
  void emptyMeansDefaults() {
    AgentOptions o = AgentOptions.parse(null);
    assertEquals(AgentOptions.DEFAULT_NAME, o.name());
    assertEquals(null, o.socket());
    assertEquals(0, o.smbKb());
    assertTrue(o.jfr());
    assertEquals("", o.jfrConfig(), "jvm.jfr's own defaults");
    assertTrue(org.jperfetto.producer.jfr.JfrConfig.parse(o.jfrConfig()).has(
        org.jperfetto.producer.jfr.EventGroup.SAMPLES), "an agent's jvm.jfr takes Java stack samples by default");
    assertTrue(org.jperfetto.producer.jfr.JfrConfig.parse(AgentOptions.parse("jfr=gc+samples").jfrConfig()).has(
        org.jperfetto.producer.jfr.EventGroup.SAMPLES), "and when its groups name them");
    assertEquals(List.of(), o.methods());
    assertEquals(o, AgentOptions.parse(" "));
  }

  @Test
  void everyOption() {
    AgentOptions o = AgentOptions.parse("name=shop,socket=/tmp/p.sock,smb=1024,jfr=gc+locks,"
        + "methods=com.shop.Cart#add+com.shop.db.*");
    assertEquals(new AgentOptions("shop", "/tmp/p.sock", 1024, true, "groups=gc,locks",
        List.of("com.shop.Cart#add", "com.shop.db.*")), o);
    assertFalse(AgentOptions.parse("jfr=off").jfr());
  }

  @Test
  void optionFileAddsToTheLine() throws Exception {
    Path f = dir.resolve("agent.conf");
    Files.writeString(f, "# the shop's agent\nname=shop\nmethods=com.shop.Cart#add\nmethods=com.shop.Order\n\n");
    AgentOptions o = AgentOptions.parse("file=" + f + ",smb=512");
    assertEquals("shop", o.name());
    assertEquals(512, o.smbKb());
    assertEquals(List.of("com.shop.Cart#add", "com.shop.Order"), o.methods());
  }

  @Test
  void badOptionsAreNamed() {
    assertMessage("agent option \"colour\" unknown", "colour=red");
    assertMessage("expected KEY=VALUE", "name");
    assertMessage("smb=0: expected KiB in 1..32768", "smb=0");
    assertMessage("smb=lots", "smb=lots");
    assertMessage("socket needs a value", "socket=");
    assertMessage("method pattern \"com.shop.Cart#a#b\"", "methods=com.shop.Cart#a#b");
    assertMessage("jvm.jfr config", "jfr=gc+nonsense");
    assertMessage("agent option file", "file=" + dir.resolve("absent"));
  }

  @Test
  void aBadLineOfAnOptionFileSaysWhere() throws Exception {
    Path f = dir.resolve("agent.conf");
    Files.writeString(f, "name=shop\nnope\n");
    assertMessage(f + ":2:", "file=" + f);
  }

  private static void assertMessage(String expected, String options) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> AgentOptions.parse(options));
    assertTrue(e.getMessage().contains(expected), e.getMessage());
  }
}
