package org.jperfetto.service;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import org.jperfetto.protos.SystemInfo;
import org.jperfetto.protos.Utsname;

/** What the service says about the machine it runs on (from /proc and the JDK). */
public final class LocalSystemInfo {
  private LocalSystemInfo() {}

  /** This machine's SystemInfo, as the service records it (and a relay sends it to its host). */
  public static SystemInfo read() {
    SystemInfo.Builder info = SystemInfo.newBuilder().setTracingServiceVersion(ServicePackets.SERVICE_VERSION);
    Utsname.Builder uts = Utsname.newBuilder()
        .setSysname(procOr("/proc/sys/kernel/ostype", System.getProperty("os.name", "")))
        .setRelease(procOr("/proc/sys/kernel/osrelease", System.getProperty("os.version", "")))
        .setVersion(procOr("/proc/sys/kernel/version", ""))
        .setMachine(machine());
    info.setUtsname(uts);
    info.setPageSize(4096);
    info.setNumCpus(Runtime.getRuntime().availableProcessors());
    info.setTimezoneOffMins(ZonedDateTime.now(ZoneId.systemDefault()).getOffset().getTotalSeconds() / 60);
    long ram = memTotalBytes();
    if (ram > 0) {
      info.setSystemRamBytes(ram);
    }
    return info.build();
  }

  /** uname's machine from the JDK's arch name. */
  private static String machine() {
    String arch = System.getProperty("os.arch", "");
    return switch (arch) {
      case "amd64" -> "x86_64";
      case "x86" -> "i686";
      default -> arch;
    };
  }

  private static String procOr(String path, String fallback) {
    try {
      return Files.readString(Path.of(path), StandardCharsets.UTF_8).strip();
    } catch (IOException | RuntimeException e) {
      return fallback;
    }
  }

  private static long memTotalBytes() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
        if (line.startsWith("MemTotal:")) {
          String[] parts = line.substring(9).trim().split("\\s+");
          return Long.parseLong(parts[0]) * 1024;
        }
      }
    } catch (IOException | RuntimeException e) {
      // no RAM figure then
    }
    return 0;
  }
}
