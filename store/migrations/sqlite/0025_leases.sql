-- Leases (issue 33, "Leaders and replicas"): the loops that must run once
-- when several hubs share the database run on the replica holding the
-- lease "hub". One row per lease name. holder is the replica id ('' when
-- released); token is the fencing counter, raised by one on every change
-- of holder and kept by a renewal, so a write that checks its token in
-- its own transaction (store.Tx.Fence) is refused once another replica
-- took over. expires_at and renewed_at are Unix milliseconds of the
-- holder's clock: a lease is free once expires_at <= now.
CREATE TABLE leases (
    name       TEXT   NOT NULL PRIMARY KEY,
    holder     TEXT   NOT NULL DEFAULT '',
    token      BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    renewed_at BIGINT NOT NULL
);
