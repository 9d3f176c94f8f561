/* names: the names C shares with Java and Python, generated from schemas/ at build time
 * (python -m cpi2.schemas.schemagen c-names): CPI2_TOPIC_* (schemas/topics.conf), an enum and a
 * symbol table per Avro enum (enum cpi2_task_class, cpi2_task_class_symbols[], ...), and each
 * message's fields in schema order (cpi2_cpi_sample_fields[], ...). */
#ifndef CPI2_NAMES_H
#define CPI2_NAMES_H

#include <stddef.h>

#include "cpi2_names_gen.h"

/* The index of symbol in symbols[0..n), e.g. cpi2_symbol_index(cpi2_command_kind_symbols,
 * CPI2_COMMAND_KIND_SYMBOLS_LEN, "CAP"). Returns the index, or -ENOENT (also for NULL). */
int cpi2_symbol_index(const char *const *symbols, size_t n, const char *symbol);

#endif
