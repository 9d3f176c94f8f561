package org.cpi2.flink.detect;

/**
 * The spec a sample was judged against (paper 4.1): whether it is usable, its CPI mean and standard
 * deviation, and the outlier threshold they give. A judged sample ({@link ScoredSample#spec}) and
 * its task's series ({@link org.cpi2.flink.correlate.TaskSeries#spec}) hold one; null where no spec
 * was known. Immutable, so they share it.
 */
public record SpecVerdict(boolean usable, double mean, double stddev, double threshold) {}
