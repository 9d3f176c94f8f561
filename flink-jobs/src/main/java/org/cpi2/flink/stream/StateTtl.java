package org.cpi2.flink.stream;

import java.time.Duration;
import org.apache.flink.api.common.state.StateTtlConfig;

/** State of tasks that stop reporting expires after this long without an update. */
public final class StateTtl {
  private StateTtl() {}

  public static StateTtlConfig forTasks(long ttlSeconds) {
    return builder(ttlSeconds).build();
  }

  private static StateTtlConfig.Builder builder(long ttlSeconds) {
    return StateTtlConfig.newBuilder(Duration.ofSeconds(ttlSeconds))
        .setUpdateType(StateTtlConfig.UpdateType.OnCreateAndWrite)
        .setStateVisibility(StateTtlConfig.StateVisibility.NeverReturnExpired);
  }
}
