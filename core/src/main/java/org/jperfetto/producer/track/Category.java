package org.jperfetto.producer.track;

import java.util.List;
import java.util.Objects;

/**
 * A TrackEvent category: a name, an optional description and tags ("slow", "debug", ...) that a
 * session's TrackEventConfig enables or disables. Declare categories as {@code static final}
 * constants and hand them to {@link TrackEvent.Builder#categories}; a category created while tracing
 * runs comes from {@link TrackEvent#dynamicCategory}.
 *
 * <p>{@link #isEnabled()} is one volatile int read: a disabled trace point costs that load and a
 * branch the CPU predicts.
 */
public final class Category {
  private final String name;
  private final String description;
  private final List<String> tags;
  /**
   * Set in {@link #enabledInstances} until a TrackEvent registers the category: a trace point with
   * a category no builder was given then takes the recording path, which refuses it, at no cost to
   * the disabled check of a registered one.
   */
  static final int UNREGISTERED = 1 << 31;
  // Bit i set: active instance i of the owning TrackEvent's data source records this category.
  private volatile int enabledInstances = UNREGISTERED;
  private volatile TrackEvent owner;
  private volatile TrackEvent.Scope scope;

  private Category(String name, String description, List<String> tags) {
    if (name.isEmpty()) {
      throw new IllegalArgumentException("category without a name");
    }
    this.name = name;
    this.description = description;
    this.tags = List.copyOf(tags);
  }

  /** A category with tags (e.g. "slow", "debug": disabled unless a config asks for them). */
  public static Category of(String name, String... tags) {
    return new Category(Objects.requireNonNull(name, "name"), "", List.of(tags));
  }

  /** A category with a description shown by tools that list categories. */
  public static Category described(String name, String description, String... tags) {
    return new Category(Objects.requireNonNull(name, "name"), Objects.requireNonNull(description, "description"),
        List.of(tags));
  }

  /** The name configs match (enabled_categories, disabled_categories). */
  public String name() {
    return name;
  }

  /** What the category records, for tools listing categories (may be empty). */
  public String description() {
    return description;
  }

  /** The tags configs match (enabled_tags, disabled_tags). */
  public List<String> tags() {
    return tags;
  }

  /**
   * Whether any tracing session records this category now. A session's categories turn on one after
   * another: code that waits for a session before tracing in several categories waits for {@link
   * TrackEvent.Builder#onSessionsChanged}, which runs once all of them are set.
   */
  public boolean isEnabled() {
    return (enabledInstances & ~UNREGISTERED) != 0;
  }

  /**
   * Instances (bit per data source instance slot) recording this category; {@link #UNREGISTERED}
   * before a TrackEvent registers it.
   */
  int enabledInstances() {
    return enabledInstances;
  }

  boolean isEnabledFor(int instanceIndex) {
    return (enabledInstances & (1 << instanceIndex)) != 0;
  }

  void setEnabled(int instanceIndex, boolean enabled) {
    synchronized (this) {
      int bit = 1 << instanceIndex;
      enabledInstances = enabled ? enabledInstances | bit : enabledInstances & ~bit;
    }
  }

  /** Binds the category to the TrackEvent that registers it; a category belongs to one only. */
  void bind(TrackEvent trackEvent) {
    synchronized (this) {
      if (owner != null && owner != trackEvent) {
        throw new IllegalStateException("category already registered with another TrackEvent: " + name);
      }
      owner = trackEvent;
      scope = trackEvent.new Scope(this);
      enabledInstances &= ~UNREGISTERED;
    }
  }

  TrackEvent owner() {
    return owner;
  }

  /** The reusable scope object whose close() ends a slice of this category (allocation free). */
  TrackEvent.Scope scope() {
    return scope;
  }

  @Override
  public String toString() {
    return tags.isEmpty() ? "Category(" + name + ")" : "Category(" + name + " tags=" + tags + ")";
  }
}
