package org.cpi2.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.List;
import java.util.stream.Stream;
import org.apache.avro.Schema;
import org.apache.avro.SchemaCompatibility;
import org.apache.avro.SchemaCompatibility.SchemaCompatibilityType;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.specific.SpecificData;
import org.cpi2.schema.CapOutcome;
import org.cpi2.schema.ControlCommand;
import org.cpi2.schema.CpiSample;
import org.cpi2.schema.CpiSpec;
import org.cpi2.schema.DeadLetter;
import org.cpi2.schema.EnforcementAction;
import org.cpi2.schema.Incident;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Every archived version stays backward and forward compatible with the current schema. */
class SchemaCompatibilityTest {
  static Stream<Class<?>> messages() {
    return Stream.of(
        CpiSample.class,
        CpiSpec.class,
        Incident.class,
        EnforcementAction.class,
        ControlCommand.class,
        CapOutcome.class,
        DeadLetter.class);
  }

  @ParameterizedTest
  @MethodSource("messages")
  void everyVersionIsBackwardAndForwardCompatible(Class<?> type) {
    Schema current = SpecificData.get().getSchema(type);
    List<Schema> versions = SchemaVersions.of(current.getName());
    assertFalse(versions.isEmpty(), "no archived version of " + current.getName());
    for (int i = 0; i < versions.size(); i++) {
      Schema old = versions.get(i);
      String what = current.getName() + " v" + (i + 1);
      assertEquals(
          SchemaCompatibilityType.COMPATIBLE,
          SchemaCompatibility.checkReaderWriterCompatibility(current, old).getType(),
          "current reader cannot read " + what + " (backward compatibility)");
      assertEquals(
          SchemaCompatibilityType.COMPATIBLE,
          SchemaCompatibility.checkReaderWriterCompatibility(old, current).getType(),
          what + " reader cannot read the current writer (forward compatibility)");
    }
  }

  @ParameterizedTest
  @MethodSource("messages")
  void newestArchivedVersionIsTheCurrentSchema(Class<?> type) {
    Schema current = SpecificData.get().getSchema(type);
    List<Schema> versions = SchemaVersions.of(current.getName());
    Schema newest = versions.get(versions.size() - 1);
    assertEquals(
        SchemaNormalization.parsingFingerprint64(current),
        SchemaNormalization.parsingFingerprint64(newest),
        current.getName() + " changed without archiving it: run make -C schemas archive");
  }
}
