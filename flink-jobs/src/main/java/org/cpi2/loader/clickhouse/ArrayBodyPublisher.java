package org.cpi2.loader.clickhouse;

import java.net.http.HttpRequest;
import java.nio.ByteBuffer;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A request body that sends {@code body[0, length)} as views of the array itself, a slice per
 * buffer the client asks for, without copying it. The JDK's {@code BodyPublishers.ofByteArray}
 * copies the whole array into small buffers before it sends the first: for a large batch, that copy
 * lives as long as the insert takes and so outlives young collections, which then copy it again.
 * The array must not change until the request has completed. Each subscription (each attempt of a
 * request) sends it from the start.
 */
final class ArrayBodyPublisher implements HttpRequest.BodyPublisher {
  /** Bytes per buffer handed to the client. */
  static final int SLICE_BYTES = 64 * 1024;

  private final byte[] body;
  private final int length;

  ArrayBodyPublisher(byte[] body, int length) {
    if (length < 0 || length > body.length) {
      throw new IllegalArgumentException(
          "length " + length + " outside an array of " + body.length);
    }
    this.body = body;
    this.length = length;
  }

  @Override
  public long contentLength() {
    return length;
  }

  @Override
  public void subscribe(Flow.Subscriber<? super ByteBuffer> subscriber) {
    Slices s = new Slices(subscriber);
    subscriber.onSubscribe(s);
    s.drain(); // an empty body completes without being asked
  }

  /**
   * Hands out slices while there is demand. Reentrant calls (a subscriber that asks for more from
   * onNext) and calls from other threads only add demand: the one caller already in the loop
   * delivers it, so onNext is never called concurrently nor nested.
   */
  private final class Slices implements Flow.Subscription {
    private final Flow.Subscriber<? super ByteBuffer> subscriber;
    private final AtomicLong demand = new AtomicLong();
    private final AtomicInteger callers = new AtomicInteger();
    private int offset;
    private volatile boolean done;

    Slices(Flow.Subscriber<? super ByteBuffer> subscriber) {
      this.subscriber = subscriber;
    }

    @Override
    public void request(long n) {
      if (done) {
        return;
      }
      if (n <= 0) {
        done = true;
        subscriber.onError(
            new IllegalArgumentException("request(" + n + "): demand must be positive"));
        return;
      }
      demand.accumulateAndGet(n, (a, b) -> a + b < 0 ? Long.MAX_VALUE : a + b);
      drain();
    }

    @Override
    public void cancel() {
      done = true;
    }

    void drain() {
      if (callers.getAndIncrement() != 0) {
        return;
      }
      do {
        while (!done && offset < length && demand.get() > 0) {
          int n = Math.min(SLICE_BYTES, length - offset);
          ByteBuffer slice = ByteBuffer.wrap(body, offset, n).slice();
          offset += n;
          demand.decrementAndGet();
          subscriber.onNext(slice);
        }
        if (!done && offset >= length) {
          done = true;
          subscriber.onComplete();
        }
      } while (callers.decrementAndGet() != 0);
    }
  }
}
