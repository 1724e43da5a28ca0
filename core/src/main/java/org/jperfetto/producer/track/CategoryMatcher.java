package org.jperfetto.producer.track;

import java.util.List;
import org.jperfetto.protos.TrackEventConfig;

/**
 * Decides whether a session records a category, with upstream's rules for TrackEventConfig: three
 * passes (exact names, then "prefix*" patterns, then the lone "*"); in each pass an enabled
 * category wins, then a disabled category, then a disabled tag, then an enabled tag. Categories
 * tagged "slow" or "debug" are disabled when the config names no tags at all. A category nothing
 * matches is enabled.
 */
final class CategoryMatcher {
  static final String SLOW_TAG = "slow";
  static final String DEBUG_TAG = "debug";

  private enum Pass { EXACT, PATTERN, WILDCARD }

  private final TrackEventConfig config;

  CategoryMatcher(TrackEventConfig config) {
    this.config = config;
  }

  boolean isEnabled(String name, List<String> tags) {
    for (Pass pass : Pass.values()) {
      if (anyMatches(config.getEnabledCategoriesList(), name, pass)) {
        return true;
      }
      if (anyMatches(config.getDisabledCategoriesList(), name, pass)) {
        return false;
      }
      for (String tag : tags) {
        if (tagDisabled(tag, pass)) {
          return false;
        }
      }
      for (String tag : tags) {
        if (anyMatches(config.getEnabledTagsList(), tag, pass)) {
          return true;
        }
      }
    }
    return true;
  }

  private boolean tagDisabled(String tag, Pass pass) {
    if (config.getDisabledTagsCount() > 0) {
      return anyMatches(config.getDisabledTagsList(), tag, pass);
    }
    if (config.getEnabledTagsCount() == 0) {
      return matches(SLOW_TAG, tag, pass) || matches(DEBUG_TAG, tag, pass);
    }
    return false;
  }

  private static boolean anyMatches(List<String> patterns, String name, Pass pass) {
    for (String pattern : patterns) {
      if (matches(pattern, name, pass)) {
        return true;
      }
    }
    return false;
  }

  /**
   * An exact pattern matches its own name in every pass; "*" only in the wildcard pass; "prefix*"
   * (one trailing star) only in the pattern pass.
   */
  private static boolean matches(String pattern, String name, Pass pass) {
    int star = pattern.indexOf('*');
    if (star < 0) {
      return pattern.equals(name);
    }
    if (star == 0) {
      return pass == Pass.WILDCARD;
    }
    return pass == Pass.PATTERN && name.startsWith(pattern.substring(0, star));
  }
}
