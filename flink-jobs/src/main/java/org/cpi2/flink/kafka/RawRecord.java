package org.cpi2.flink.kafka;

/**
 * One Kafka record as received, before decoding: where it came from and its bytes. Decoding happens
 * in an operator so that a bad record becomes a dead letter instead of a failed source.
 */
public class RawRecord {
  public String topic = "";
  public int partition = -1;
  public long offset = -1;
  public long timestampMs;
  public byte[] key;
  public byte[] value;

  /** The signature of its producer's host (HostAuth): the cpi2-host, cpi2-key, cpi2-mac headers. */
  public String producerHost;

  public String keyId;
  public byte[] mac;

  public RawRecord() {}

  public static RawRecord of(String topic, int partition, long offset, byte[] key, byte[] value) {
    RawRecord r = new RawRecord();
    r.topic = topic;
    r.partition = partition;
    r.offset = offset;
    r.key = key;
    r.value = value;
    return r;
  }
}
