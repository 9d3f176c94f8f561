package org.cpi2.flink.records;

import java.util.HashMap;
import java.util.Map;

/**
 * What the spec builder holds of one bucket of event time of one job and platform until the
 * watermark passes its end: the moments of its samples (added to their spec period's then) and per
 * host its samples, their values' sum and the largest value (what {@link
 * org.cpi2.flink.spec.JobShift} reads). Parallel arrays, one entry per host. A Flink POJO.
 */
public class BucketHosts {
  public long periodEndUs;
  public long count;
  public double sum;
  public double sumSq;
  public double cpuSum;
  public String[] hosts = new String[0];
  public long[] samples = new long[0];
  public double[] hostSum = new double[0];
  public double[] hostMax = new double[0];

  public BucketHosts() {}

  /** Adds the hosts of another input of the same bucket, merging a host that is in both. */
  public void addHosts(String[] h, long[] n, double[] s, double[] max) {
    Map<String, Integer> at = new HashMap<>(hosts.length * 2 + h.length * 2);
    for (int i = 0; i < hosts.length; i++) {
      at.put(hosts[i], i);
    }
    int size = hosts.length;
    String[] nh = java.util.Arrays.copyOf(hosts, size + h.length);
    long[] nn = java.util.Arrays.copyOf(samples, size + h.length);
    double[] ns = java.util.Arrays.copyOf(hostSum, size + h.length);
    double[] nm = java.util.Arrays.copyOf(hostMax, size + h.length);
    for (int i = 0; i < h.length; i++) {
      Integer k = at.get(h[i]);
      if (k == null) {
        k = size++;
        at.put(h[i], k);
        nh[k] = h[i];
        nm[k] = max[i];
      } else {
        nm[k] = Math.max(nm[k], max[i]);
      }
      nn[k] += n[i];
      ns[k] += s[i];
    }
    hosts = java.util.Arrays.copyOf(nh, size);
    samples = java.util.Arrays.copyOf(nn, size);
    hostSum = java.util.Arrays.copyOf(ns, size);
    hostMax = java.util.Arrays.copyOf(nm, size);
  }
}
