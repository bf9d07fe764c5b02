/* era.h - the two eras of MCP that brig mcp serves (brig-mcp(1), PROTOCOL ERAS):
 *
 *   legacy  2024-11-05 .. 2025-11-25: an initialize handshake fixes the version for the
 *           connection; requests carry no version of their own.
 *   modern  2026-07-28: no handshake; every request carries its protocol version and the
 *           client's capabilities (and optionally its identity and a log level) in _meta,
 *           every result says resultType "complete" and names the server in its _meta,
 *           server/discover answers what the server speaks; ping, logging/setLevel and
 *           initialize are gone.
 *
 * One process serves one era, fixed by the opening message: initialize selects legacy, a
 * request with a valid modern envelope selects modern.  A request refused for its envelope
 * fixes nothing, so a failed probe leaves the handshake available.  This file reads and
 * checks the envelope and shapes modern results; methods.c applies the rules.
 */
#ifndef BRIG_MCP_ERA_H
#define BRIG_MCP_ERA_H

#include <json-c/json.h>
#include <stdbool.h>

#include "brig.h"

/* The modern revisions brig speaks, newest first (NULL-terminated). */
extern const char *const mcp_modern_versions[];
#define MCP_MODERN_LATEST "2026-07-28"

/* UnsupportedProtocolVersionError (2026-07-28; -32020..-32099 is the specification's). */
#define MCP_UNSUPPORTED_PROTOCOL_VERSION -32022

/* Freshness hint of the cacheable modern results (tools/list, server/discover): they change
 * only when the operator changes the policy, which takes a new server process. */
#define MCP_CACHE_TTL_MS 300000

typedef enum mcp_era {
	MCP_ERA_OPEN = 0, /* no era-fixing message yet */
	MCP_ERA_LEGACY,
	MCP_ERA_MODERN,
} mcp_era;

typedef enum mcp_envelope_status {
	MCP_ENVELOPE_NONE = 0,    /* no _meta protocol version: not a modern request */
	MCP_ENVELOPE_OK,          /* a supported modern version, well-formed */
	MCP_ENVELOPE_INVALID,     /* key / problem say what is wrong (-32602) */
	MCP_ENVELOPE_UNSUPPORTED, /* well-formed, a version brig does not speak (-32022) */
} mcp_envelope_status;

/* A request's per-request envelope; the strings are borrowed from the request. */
typedef struct mcp_envelope {
	mcp_envelope_status status;
	const char *version;        /* the protocol version named, when a string */
	const char *client_name;    /* clientInfo, when given */
	const char *client_version; /* */
	const char *key;            /* MCP_ENVELOPE_INVALID: the _meta key at fault */
	const char *problem;        /* and what is wrong with it */
} mcp_envelope;

/* Read and check params._meta of a request (params may be NULL). */
void mcp_envelope_read(json_object *params, mcp_envelope *env);

/* The error response for an envelope that is not OK: -32602 for a missing (NONE) or malformed
 * one, -32022 with data.supported / data.requested for an unsupported version. */
json_object *mcp_envelope_error(json_object *id, const mcp_envelope *env);

/* -32022 for a version this process does not serve (requested: NULL when none was named). */
json_object *mcp_unsupported_version(json_object *id, const char *requested);

/* Make result (owned, returned) a modern result: resultType "complete" and the server's
 * identity in _meta; tools/list and server/discover also get their cache hints. */
json_object *mcp_modern_result(json_object *result);
json_object *mcp_modern_cacheable(json_object *result);

/* The server/discover result. */
json_object *mcp_discover_result(const char *instructions);

/* The tools/list array in the modern shape: schemas that name their dialect, 2020-12. */
json_object *mcp_modern_tools(json_object *tools);

/* The serverInfo / _meta serverInfo object (new reference). */
json_object *mcp_server_info(void);
/* The capabilities brig offers, in both eras (new reference). */
json_object *mcp_server_capabilities(void);

#endif /* BRIG_MCP_ERA_H */
