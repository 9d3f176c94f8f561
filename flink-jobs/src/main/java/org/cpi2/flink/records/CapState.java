package org.cpi2.flink.records;

/** A cap in force on a host, as reported by its enforcer (cpi2.actions). */
public class CapState {
  public String task;
  public String victimTask;
  public String incidentId;
  public long appliedAtUs;
  public long expiresAtUs;

  public CapState() {}

  public boolean activeAt(long tUs) {
    return appliedAtUs <= tUs && tUs < expiresAtUs;
  }
}
