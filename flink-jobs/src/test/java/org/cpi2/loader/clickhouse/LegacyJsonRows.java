package org.cpi2.loader.clickhouse;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import org.apache.avro.Schema;
import org.apache.avro.specific.SpecificRecord;
import org.cpi2.schema.Incident;
import org.cpi2.schema.Suspect;

/**
 * The JSON rows as the sink wrote them before {@link JsonRows} encoded into bytes (commit 37ba311),
 * unchanged: the reference the new encoder is checked against (JsonRowsEquivalenceTest) and
 * measured against (bench/JsonRowsBenchmark). Avro records as ClickHouse JSONEachRow lines, by the
 * contract with clickhouse/: columns are the Avro field names; enums are their symbol as a string;
 * unions are null or the value; booleans are 1/0 (UInt8 on ClickHouse 18.16); bytes are base64;
 * timestamps stay Int64 microseconds.
 */
public final class LegacyJsonRows {
  private LegacyJsonRows() {}

  /** One row with every field of {@code r} except those in {@code skip}. */
  public static String row(SpecificRecord r, Set<String> skip) {
    StringBuilder sb = new StringBuilder(256).append('{');
    boolean first = true;
    for (Schema.Field f : r.getSchema().getFields()) {
      if (skip.contains(f.name())) {
        continue;
      }
      if (!first) {
        sb.append(',');
      }
      first = false;
      string(sb, f.name());
      sb.append(':');
      value(sb, r.get(f.pos()));
    }
    return sb.append('}').toString();
  }

  /** One incident_suspects row per suspect: the incident's identity, the rank (1 = highest). */
  public static List<String> suspects(Incident i) {
    List<String> rows = new ArrayList<>(i.getSuspects().size());
    int rank = 0;
    for (Suspect s : i.getSuspects()) {
      StringBuilder sb = new StringBuilder(200).append('{');
      field(sb, "incident_id", i.getIncidentId()).append(',');
      field(sb, "host", i.getHost()).append(',');
      field(sb, "detected_at_us", i.getDetectedAtUs()).append(',');
      field(sb, "rank", ++rank).append(',');
      field(sb, "task", s.getTask()).append(',');
      field(sb, "job", s.getJob()).append(',');
      field(sb, "task_class", s.getTaskClass()).append(',');
      field(sb, "correlation", s.getCorrelation()).append(',');
      field(sb, "cpu_usage", s.getCpuUsage()).append(',');
      field(sb, "lift", s.getLift()).append(',');
      field(sb, "comoving_cpu", s.getComovingCpu());
      rows.add(sb.append('}').toString());
    }
    return rows;
  }

  private static StringBuilder field(StringBuilder sb, String name, Object v) {
    string(sb, name);
    sb.append(':');
    value(sb, v);
    return sb;
  }

  static void value(StringBuilder sb, Object v) {
    if (v == null) {
      sb.append("null");
    } else if (v instanceof CharSequence || v instanceof Enum<?>) {
      string(sb, v.toString());
    } else if (v instanceof Boolean b) {
      sb.append(b ? '1' : '0');
    } else if (v instanceof Double d) {
      sb.append(Double.isFinite(d) ? d.toString() : "null");
    } else if (v instanceof Float f) {
      sb.append(Float.isFinite(f) ? f.toString() : "null");
    } else if (v instanceof Number) {
      sb.append(v);
    } else if (v instanceof ByteBuffer buf) {
      ByteBuffer copy = buf.duplicate();
      byte[] bytes = new byte[copy.remaining()];
      copy.get(bytes);
      string(sb, Base64.getEncoder().encodeToString(bytes));
    } else if (v instanceof Collection<?> c) {
      sb.append('[');
      boolean first = true;
      for (Object o : c) {
        if (!first) {
          sb.append(',');
        }
        first = false;
        value(sb, o);
      }
      sb.append(']');
    } else if (v instanceof SpecificRecord rec) {
      sb.append(row(rec, Set.of()));
    } else {
      string(sb, v.toString());
    }
  }

  static void string(StringBuilder sb, String s) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\r' -> sb.append("\\r");
        case '\t' -> sb.append("\\t");
        default -> {
          if (c < 0x20) {
            sb.append(String.format("\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
        }
      }
    }
    sb.append('"');
  }
}
