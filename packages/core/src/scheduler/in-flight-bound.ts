/**
 * How long after it started a request can still arrive at the service, in ms, for a client with
 * the default timeouts (`CLIENT_DEFAULTS.timeouts`): undici's connect timeout (10 s), then the
 * longest request timeout (suspension queries, 60 s), then 1 s for bytes already in the network
 * when the client gave up, then 4 s of event-loop lateness. A request counts in the plan's windows
 * until it settled; one whose process died never settles, and counts as arrived at this bound.
 * A client with longer timeouts needs a larger bound (`SqliteWindowStore`'s `inFlightBoundMs`).
 */
export const IN_FLIGHT_BOUND_MS = 10_000 + 60_000 + 1_000 + 4_000;
