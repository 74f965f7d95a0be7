/* cli_cmd: the one command table of `aquifer`.
 *
 * Every command is a row: group, verb, kind, HTTP method and path template,
 * flags (with type, where each lands in the request body or query, and the
 * updateMask path it stands for), default list columns and help text. The
 * dispatcher, `--help`, `aquifer completion bash` and `aquifer __routes` are
 * all generated from it, so adding a row is all it takes to add a verb.
 *
 * Path templates name their parameters in braces: {project}, {location},
 * {volume} (a CLI_O_PATH flag), {name} (the positional NAME). `__routes` prints them with a `*` per
 * parameter: "GET /v1/projects/{*}/locations/{*}/storagePools" printed with
 * each {*} as a bare star.
 */
#ifndef AQ_CLI_CMD_H
#define AQ_CLI_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct cli_args;
struct cli_ctx;

/* What a flag's value is and how it goes on the wire. */
enum cli_type {
	CLI_T_STR,        /* string as typed */
	CLI_T_BOOL,       /* --f, --f=true|false, --no-f -> JSON bool */
	CLI_T_BOOLSTR,    /* true|false -> JSON string "true" (hasRootAccess) */
	CLI_T_INT,        /* decimal integer -> JSON number */
	CLI_T_INT64,      /* decimal integer -> JSON string ("65534") */
	CLI_T_GIB,        /* size with units -> GiB as a JSON string ("2048") */
	CLI_T_MIBPS,      /* throughput with units -> MiB/s as a JSON string (int64 field) */
	CLI_T_MIBPS_NUM,  /* throughput with units -> MiB/s as a JSON number (double field) */
	CLI_T_SECONDS,    /* duration with units -> seconds as a JSON number */
	CLI_T_ENUM,       /* one of choices, any case -> upper-case JSON string */
	CLI_T_ENUM_LIST,  /* comma-separated choices -> array of upper-case strings */
	CLI_T_LABELS,     /* k=v,k2=v2 -> {"k":"v","k2":"v2"} */
	CLI_T_DICT,       /* k=v,... per the flag's keys -> object */
	CLI_T_NETWORK,    /* name=NET[,psa-range=R] (gcloud's) -> "network": NET, "psaRange": R at the body's root */
	CLI_T_KEYS,       /* k,k2 -> ["k","k2"] (--remove-labels) */
	CLI_T_FILE,       /* a file's text (one trailing newline dropped) -> JSON string: secrets
			   * stay off the command line (--password-file) */
	CLI_T_LEAD_DICT,  /* V[,k=v,...]: V is the value of the first key (typed by it), the
			   * rest as CLI_T_DICT by the other keys (--read-ahead=MODE,depth-files=N) */
	CLI_T_STR_LIST,   /* a;b -> ["a","b"]: a list inside a CLI_T_DICT, as gcloud's
			   * --backup-config=backup-policies=P1;P2 */
};

/* Command kinds; a flag's `on` is a mask of (1u << kind). */
enum cli_kind {
	CLI_K_LIST,       /* GET a collection, pages through nextPageToken */
	CLI_K_DESCRIBE,   /* GET one resource */
	CLI_K_CREATE,     /* POST parent?<id_param>=NAME, body from flags */
	CLI_K_UPDATE,     /* PATCH name?updateMask=<flags given> */
	CLI_K_DELETE,     /* DELETE name */
	CLI_K_ACTION,     /* POST name:verb (or a custom method), body from flags */
	CLI_K_LOCAL,      /* no HTTP: config, auth, completion */
	CLI_K_COUNT
};

#define CLI_ON(kind) (1u << (kind))
#define CLI_ON_MUTATE (CLI_ON(CLI_K_CREATE) | CLI_ON(CLI_K_UPDATE))
#define CLI_ON_ALL 0xffffu

/* Flag options. */
#define CLI_O_REQUIRED 0x1u   /* must be given (on create, or always for other kinds) */
#define CLI_O_REPEAT   0x2u   /* may repeat; values collect into an array at field */
#define CLI_O_QUERY    0x4u   /* goes into the query string as `field`, not the body */
#define CLI_O_HIDDEN   0x8u   /* left out of help and completion */
#define CLI_O_LABELS   0x10u  /* --update-labels, --remove-labels, --clear-labels: the new labels
                               * come from the resource's current ones (cli_labels.h), not as typed */
#define CLI_O_PATH     0x20u  /* fills the path parameter {field} (--volume: {volume}); not sent */
#define CLI_O_ENABLE   0x40u  /* also sets <first part of field>.enabled true (gcloud's
                               * --snapshot-hourly: snapshotPolicy.enabled) */

/* A key of a CLI_T_DICT flag: "anon-uid=65534" -> "anonUid": "65534". */
struct cli_key {
	const char *name;
	enum cli_type type;
	const char *field;
	const char *const *choices;
};

struct cli_flag {
	const char *name;             /* without the dashes: "capacity" */
	enum cli_type type;
	unsigned on;                  /* kinds this flag applies to */
	unsigned opts;                /* CLI_O_* */
	const char *field;            /* body path "tieringPolicy" / "exportPolicy.rules", or query name */
	const char *mask;             /* updateMask path; NULL = field */
	const char *const *choices;   /* CLI_T_ENUM, CLI_T_ENUM_LIST: upper case, NULL-terminated */
	const struct cli_key *keys;   /* CLI_T_DICT: NULL-terminated by name */
	const char *metavar;          /* "CAPACITY" */
	const char *help;
};

/* A local command's handler: returns a process exit status (CLI_EXIT_*). */
typedef int (*cli_local_fn)(struct cli_ctx *ctx, const struct cli_args *a);

/* Command options. */
#define CLI_C_HIDDEN 0x1u
#define CLI_C_LOCATION_BODY 0x2u      /* the body carries "location": the resolved --location */
#define CLI_C_REREAD 0x4u             /* an action answering Empty: print the resource it acted on (GET without ":verb") */
#define CLI_C_METRICS 0x10u           /* a metrics answer: without --format, cli_metrics.h's table */
#define CLI_C_NETWORK 0x8u            /* the body carries a network: a short name becomes
                                       * projects/{project}/global/networks/NAME, default "default" */

struct cli_cmd {
	const char *group;
	const char *verb;
	enum cli_kind kind;
	const char *method;           /* HTTP method; NULL for CLI_K_LOCAL */
	const char *path;             /* path template; NULL for CLI_K_LOCAL */
	const char *admin_path;       /* with --cluster: the cluster-admin route instead; may be NULL */
	const char *id_param;         /* CLI_K_CREATE: "storagePoolId" */
	const char *items;            /* CLI_K_LIST: response array key "storagePools" */
	const char *noun;             /* progress lines: "storage pool" */
	const char *gerund;           /* progress lines: "Creating" */
	const char *columns;          /* CLI_K_LIST default table columns */
	const char *args;             /* positional arguments for usage: "NAME", "KEY [VALUE]" */
	int min_args, max_args;
	const struct cli_flag *flags; /* resource flags, filtered by `on` */
	cli_local_fn local;
	unsigned opts;                /* CLI_C_* */
	const char *help;
};

struct cli_group {
	const char *name;
	const char *help;
};

/* The tables; cli_cmds and cli_groups end with an all-NULL row. */
extern const struct cli_cmd cli_cmds[];
extern const struct cli_group cli_groups[];
/* Flags every command or kind takes (--project, --format, --async, ...),
 * filtered by `on` like resource flags. */
extern const struct cli_flag cli_global_flags[];

const struct cli_group *cli_group_find(const char *name);
const struct cli_cmd *cli_cmd_find(const char *group, const char *verb);
/* The flag named name (without dashes) that cmd accepts, resource flags
 * first, then global ones; NULL if none. */
const struct cli_flag *cli_cmd_flag(const struct cli_cmd *cmd, const char *name);
/* Whether flag applies to cmd. */
bool cli_flag_applies(const struct cli_flag *f, const struct cli_cmd *cmd);
/* Whether the type takes no value (--flag alone means true). */
bool cli_type_is_bool(enum cli_type t);

/* Print the command table's HTTP routes, one "METHOD PATH" per line (a star per parameter),
 * sorted and without duplicates, to out. */
void cli_routes_print(FILE *out);

#endif
