package org.cpi2.wire;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import org.apache.avro.Schema;

/** Every published version of a message schema, as archived under schemas/versions/. */
public final class SchemaVersions {
  private SchemaVersions() {}

  /** Versions 1..N of {@code message} (for example "CpiSample"), oldest first. */
  public static List<Schema> of(String message) {
    List<Schema> out = new ArrayList<>();
    for (int v = 1; ; v++) {
      String path = "/cpi2/schemas/versions/" + message + "/v" + v + ".avsc";
      try (InputStream in = SchemaVersions.class.getResourceAsStream(path)) {
        if (in == null) {
          break;
        }
        out.add(new Schema.Parser().parse(in));
      } catch (IOException e) {
        throw new IllegalStateException("cannot read " + path, e);
      }
    }
    return out;
  }
}
