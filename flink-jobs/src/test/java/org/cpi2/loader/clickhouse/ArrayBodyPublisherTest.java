package org.cpi2.loader.clickhouse;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayOutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.Flow;
import java.util.concurrent.LinkedBlockingQueue;
import org.junit.jupiter.api.Test;

/** The zero-copy request body: the bytes it hands out, the protocol it keeps, and a real POST. */
class ArrayBodyPublisherTest {
  private static byte[] random(int n) {
    byte[] b = new byte[n];
    SplittableRandom r = new SplittableRandom(n);
    for (int i = 0; i < n; i++) {
      b[i] = (byte) r.nextInt(256);
    }
    return b;
  }

  /**
   * Records what it is given; asks for {@code perCall} more from each onNext until told to stop.
   */
  private static final class Recorder implements Flow.Subscriber<ByteBuffer> {
    final List<ByteBuffer> slices = new ArrayList<>();
    final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    Flow.Subscription subscription;
    int completions;
    Throwable error;
    long perCall = 1;
    int stopAfter = Integer.MAX_VALUE;
    boolean inside;
    boolean nested;

    @Override
    public void onSubscribe(Flow.Subscription s) {
      subscription = s;
    }

    @Override
    public void onNext(ByteBuffer b) {
      nested |= inside;
      inside = true;
      slices.add(b);
      byte[] copy = new byte[b.remaining()];
      b.duplicate().get(copy);
      bytes.write(copy, 0, copy.length);
      if (slices.size() >= stopAfter) {
        subscription.cancel();
      } else {
        subscription.request(perCall); // reentrant: must be delivered after this returns
      }
      inside = false;
    }

    @Override
    public void onError(Throwable t) {
      error = t;
    }

    @Override
    public void onComplete() {
      completions++;
    }
  }

  @Test
  void handsOutViewsOfTheArrayOneSliceAtATime() {
    byte[] body = random(3 * ArrayBodyPublisher.SLICE_BYTES + 1234);
    int length = body.length - 1000; // a batch fills its array only partly
    ArrayBodyPublisher p = new ArrayBodyPublisher(body, length);
    assertEquals(length, p.contentLength());
    Recorder r = new Recorder();
    p.subscribe(r);
    assertTrue(r.slices.isEmpty(), "nothing before the first request");
    r.subscription.request(1);
    assertArrayEquals(Arrays.copyOf(body, length), r.bytes.toByteArray());
    assertEquals(4, r.slices.size());
    for (ByteBuffer b : r.slices) {
      assertSame(body, b.array(), "a view of the batch, not a copy");
      assertTrue(b.remaining() <= ArrayBodyPublisher.SLICE_BYTES);
    }
    assertFalse(r.nested, "onNext was called from inside onNext");
    assertEquals(1, r.completions);
    assertEquals(null, r.error);
    r.subscription.request(5); // after completion: nothing more
    assertEquals(4, r.slices.size());
    assertEquals(1, r.completions);
  }

  @Test
  void eachSubscriptionSendsFromTheStart() {
    byte[] body = random(ArrayBodyPublisher.SLICE_BYTES + 7);
    ArrayBodyPublisher p = new ArrayBodyPublisher(body, body.length);
    for (int attempt = 0; attempt < 2; attempt++) {
      Recorder r = new Recorder();
      r.perCall = Long.MAX_VALUE;
      p.subscribe(r);
      r.subscription.request(Long.MAX_VALUE); // demand that would overflow when added to
      assertArrayEquals(body, r.bytes.toByteArray());
      assertEquals(1, r.completions);
    }
  }

  @Test
  void anEmptyBodyCompletesWithoutARequest() {
    Recorder r = new Recorder();
    new ArrayBodyPublisher(new byte[8], 0).subscribe(r);
    assertEquals(1, r.completions);
    assertTrue(r.slices.isEmpty());
  }

  @Test
  void cancelStopsAndANonPositiveRequestFails() {
    byte[] body = random(5 * ArrayBodyPublisher.SLICE_BYTES);
    Recorder cancelled = new Recorder();
    cancelled.stopAfter = 2;
    new ArrayBodyPublisher(body, body.length).subscribe(cancelled);
    cancelled.subscription.request(1);
    assertEquals(2, cancelled.slices.size());
    assertEquals(0, cancelled.completions);

    Recorder wrong = new Recorder();
    new ArrayBodyPublisher(body, body.length).subscribe(wrong);
    wrong.subscription.request(0);
    assertInstanceOf(IllegalArgumentException.class, wrong.error);
    assertTrue(wrong.slices.isEmpty());
    assertEquals(0, wrong.completions);

    assertThrows(
        IllegalArgumentException.class, () -> new ArrayBodyPublisher(body, body.length + 1));
  }

  @Test
  void theJdkClientPostsExactlyTheBatch() throws Exception {
    LinkedBlockingQueue<byte[]> received = new LinkedBlockingQueue<>();
    LinkedBlockingQueue<String> lengths = new LinkedBlockingQueue<>();
    HttpServer server =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext(
        "/",
        ex -> {
          lengths.add(String.valueOf(ex.getRequestHeaders().getFirst("Content-Length")));
          received.add(ex.getRequestBody().readAllBytes());
          ex.sendResponseHeaders(200, -1);
          ex.close();
        });
    server.start();
    try {
      HttpClient client = HttpClient.newHttpClient();
      URI uri =
          URI.create(
              "http://"
                  + server.getAddress().getHostString()
                  + ":"
                  + server.getAddress().getPort()
                  + "/");
      byte[] body = random(20 * ArrayBodyPublisher.SLICE_BYTES + 321);
      int length = body.length - 300;
      for (int i = 0; i < 2; i++) {
        HttpResponse<Void> resp =
            client.send(
                HttpRequest.newBuilder(uri).POST(new ArrayBodyPublisher(body, length)).build(),
                HttpResponse.BodyHandlers.discarding());
        assertEquals(200, resp.statusCode());
        assertEquals(String.valueOf(length), lengths.take());
        assertArrayEquals(Arrays.copyOf(body, length), received.take());
      }
    } finally {
      server.stop(0);
    }
  }
}
