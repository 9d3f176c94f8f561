/**
 * {@link org.cpi2.flink.logic.PeriodMoments}, the spec builder's per-period state: Flink's POJO
 * serializer names the class in savepoints, so it stays in the package it was first written from.
 */
package org.cpi2.flink.logic;
