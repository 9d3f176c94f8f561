package org.cpi2.it;

import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;

/**
 * A trivial bounded job for the stack's smoke test: doubles the numbers 1..N and adds them up in an
 * accumulator named "sum", which the test reads back over the REST API (expected N*(N+1)).
 */
public class SmokeJob {
  public static void main(String[] args) throws Exception {
    long n = args.length > 0 ? Long.parseLong(args[0]) : 1000;
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.fromSequence(1, n)
        .map(new Doubler())
        .name("double-and-sum")
        .uid("double-and-sum")
        .sinkTo(new DiscardingSink<>())
        .name("discard")
        .uid("discard");
    env.execute("cpi2-smoke");
  }

  static class Doubler extends RichMapFunction<Long, Long> {
    private final LongCounter sum = new LongCounter();

    @Override
    public void open(OpenContext ctx) {
      getRuntimeContext().addAccumulator("sum", sum);
    }

    @Override
    public Long map(Long x) {
      sum.add(2 * x);
      return 2 * x;
    }
  }
}
