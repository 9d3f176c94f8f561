package org.cpi2.flink.functions;

import java.time.Duration;
import org.apache.flink.api.common.state.StateTtlConfig;

/** State of tasks that stop reporting expires after this long without an update. */
final class StateTtl {
  private StateTtl() {}

  static StateTtlConfig forTasks(long ttlSeconds) {
    return builder(ttlSeconds).build();
  }

  private static StateTtlConfig.Builder builder(long ttlSeconds) {
    return StateTtlConfig.newBuilder(Duration.ofSeconds(ttlSeconds))
        .setUpdateType(StateTtlConfig.UpdateType.OnCreateAndWrite)
        .setStateVisibility(StateTtlConfig.StateVisibility.NeverReturnExpired);
  }
}
