package org.cpi2.wire;

/** A message that cannot be decoded; the message says why, for the dead-letter topic. */
public class WireFormatException extends Exception {
  public WireFormatException(String reason, Throwable cause) {
    super(reason, cause);
  }

  public WireFormatException(String reason) {
    super(reason);
  }
}
