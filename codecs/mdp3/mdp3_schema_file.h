/*
 * Which SBE schema a file holds, against the schema the MDP3 decoder was generated from.
 *
 * The decoder is code generated at build time (-Dmdp3_schema), so a channel's configured schema
 * file cannot change what is decoded: it states which schema the operator expects the feed to
 * use. The daemon refuses to run a channel whose file names another schema (id) or version than
 * the build's, so a build and a venue upgrade that drifted apart are caught at start, not read
 * as nulls in production.
 */
#ifndef TP_MDP3_SCHEMA_FILE_H
#define TP_MDP3_SCHEMA_FILE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Reads the id and version attributes of the <messageSchema> element (any namespace prefix) of
 * an SBE schema file. 0, or a negative errno with why in err: -ENOENT and the like when the file
 * cannot be read, -EINVAL when it has no messageSchema element or the attributes are missing or
 * not decimal numbers.
 */
int tp_sbe_schema_file_id(const char *path, uint32_t *id, uint32_t *version, char *err,
                          size_t err_len);

/*
 * The same on a NUL-terminated text: 0, -ENOENT (no complete messageSchema start tag), or
 * -EINVAL (the element lacks a decimal id or version).
 */
int tp_sbe_schema_text_id(const char *text, uint32_t *id, uint32_t *version);

/* 0 if the file is the decoder's schema (same id and version), else a negative errno and why. */
int tp_mdp3_schema_file_check(const char *path, char *err, size_t err_len);

#endif
