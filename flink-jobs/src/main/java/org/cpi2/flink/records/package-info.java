/**
 * State kept by Flink's POJO serializer (the detector's, spec builder's, correlator's and judge's
 * per-task and per-key records). Its savepoints name each class, so the classes stay in this
 * package whatever role uses them: moved, a savepoint of an earlier build would not restore.
 */
package org.cpi2.flink.records;
