// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
//go:build ignore

// Per-process socket accounting for netmon's eBPF attribution backend.
//
// Two tp_btf programs on the sock:sock_send_length and
// sock:sock_recv_length tracepoints (kernel >= 6.3; kprobes and fentry
// are not used because many kernels, this project's CI included, refuse
// them) add the bytes every sendmsg/recvmsg moved on an IPv4/IPv6 TCP or
// UDP socket to the socket's slot (see account below), with the
// group leader's comm, protocol, local and remote address and port
// recorded when the slot is taken. The tracepoints fire in
// the calling task's context, so the process is exact, even for a
// process that exits a millisecond later. User space reads the
// cumulative counters every interval and reports deltas. A third,
// on sched:sched_process_exit, counts task exits, which keeps the
// per-CPU cache of the fast path exact (see sk_cache).
//
// No vmlinux.h: the few kernel structs used are declared below with
// preserve_access_index, so the CO-RE loader (cilium/ebpf) relocates
// their fields against the running kernel's BTF.

typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef unsigned long long __u64;
typedef signed char __s8;
typedef short __s16;
typedef int __s32;
typedef long long __s64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;

enum {
	BPF_MAP_TYPE_ARRAY = 2,
	BPF_MAP_TYPE_PERCPU_HASH = 5,
	BPF_MAP_TYPE_PERCPU_ARRAY = 6,
	BPF_MAP_TYPE_QUEUE = 22,
	BPF_MAP_TYPE_SK_STORAGE = 24,
};
enum { BPF_ANY = 0, BPF_NOEXIST = 1 };
enum { BPF_SK_STORAGE_GET_F_CREATE = 1 };

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#define AF_INET 2
#define AF_INET6 10
#define IPPROTO_TCP 6
#define IPPROTO_UDP 17
#define MSG_PEEK 2
#define PF_KTHREAD 0x00200000

// Read whole (16 bytes); its members differ by kernel.
struct in6_addr {
	__u8 bytes[16];
};

struct sock_common {
	union {
		__u64 skc_addrpair;
		struct {
			__be32 skc_daddr;
			__be32 skc_rcv_saddr;
		};
	};
	union {
		__u32 skc_portpair;
		struct {
			__be16 skc_dport;
			__u16 skc_num;
		};
	};
	unsigned short skc_family;
	struct in6_addr skc_v6_daddr;
	struct in6_addr skc_v6_rcv_saddr;
} __attribute__((preserve_access_index));

struct sock {
	struct sock_common __sk_common;
	__u16 sk_protocol;
} __attribute__((preserve_access_index));

struct task_struct {
	void *stack;
	unsigned int flags;
	int tgid;
	struct task_struct *group_leader;
	char comm[16];
} __attribute__((preserve_access_index));

// flow_key is one process's socket: the socket's kernel address, the
// process ID and the socket's port pair. A small key, read with plain
// loads, keeps the per-call path cheap (the socket cookie helper costs
// about 40 ns here). The port pair tells a freed socket from a new one
// the allocator put at the same address, and gives a UDP socket that
// connects after its first datagrams a new entry with the new remote.
struct flow_key {
	__u64 sk;
	__u32 pid;
	__u32 ports;
};

// flow_val is the counters and, written once when the entry is created
// (so only in the creating CPU's slot of the per-CPU value), the
// socket's addresses and the process name. Addresses are in network
// order (IPv4 in the first 4 bytes), ports in host order.
struct flow_val {
	__u64 bytes_in;
	__u64 bytes_out;
	__u64 calls_in;
	__u64 calls_out;
	__u8 local[16];
	__u8 remote[16];
	__u16 lport;
	__u16 rport;
	__u8 family;
	__u8 proto;
	__u8 pad[2];
	char comm[16];
};

// Not preallocated: a per-CPU value of 88 bytes for 16 384 entries would
// pin 1.4 MB per CPU (185 MB on a 128-CPU host) whatever the traffic;
// entries are allocated as sockets appear (kernel 6.1+ allocates safely
// from tracing programs).
#define BPF_F_NO_PREALLOC 1

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct flow_key);
	__type(value, struct flow_val);
} flows SEC(".maps");

// Counters of what could not be tied to a process, by reason.
#define LOST_KERNEL 0   // a kernel thread's socket
#define LOST_MAP_FULL 1 // the flows map was full
#define LOST_REASONS 2

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LOST_REASONS);
	__type(key, __u32);
	__type(value, struct flow_val);
} lost SEC(".maps");

static __always_inline void add(struct flow_val *v, __u64 bytes, int out)
{
	// Per-CPU values: no atomics needed, the program does not migrate
	// off its CPU while it runs.
	if (out) {
		v->bytes_out += bytes;
		v->calls_out++;
	} else {
		v->bytes_in += bytes;
		v->calls_in++;
	}
}

static __always_inline void count_lost(__u32 reason, __u64 bytes, int out)
{
	struct flow_val *v = bpf_map_lookup_elem(&lost, &reason);
	if (v)
		add(v, bytes, out);
}

// A zeroed value for new entries: too big for the 512-byte stack next
// to the key comfortably, and one per CPU so programs do not race.
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct flow_val);
} scratch SEC(".maps");

// describe fills the socket's addresses and the process name of a new
// entry.
static __always_inline void describe(struct flow_val *nv, struct sock *sk, unsigned short family, __u16 proto)
{
	nv->family = family;
	nv->proto = proto;
	// The group leader's name, as /proc/<pid>/comm shows it, not the
	// sending thread's (browsers name their threads).
	struct task_struct *leader = bpf_get_current_task_btf()->group_leader;
	__builtin_memcpy(nv->comm, leader->comm, sizeof(nv->comm));
	nv->lport = sk->__sk_common.skc_num;
	nv->rport = __builtin_bswap16(sk->__sk_common.skc_dport);
	if (family == AF_INET) {
		*(__be32 *)nv->local = sk->__sk_common.skc_rcv_saddr;
		*(__be32 *)nv->remote = sk->__sk_common.skc_daddr;
	} else {
		__builtin_memcpy(nv->local, &sk->__sk_common.skc_v6_rcv_saddr, 16);
		__builtin_memcpy(nv->remote, &sk->__sk_common.skc_v6_daddr, 16);
	}
}

static __always_inline int account_hash(struct sock *sk, int ret, int out, unsigned short family, __u16 proto, struct flow_key *kp)
{
	struct flow_key k = *kp;
	struct flow_val *v = bpf_map_lookup_elem(&flows, &k);
	if (v) {
		add(v, ret, out);
		return 0;
	}

	// A new entry: once per socket and process.
	if (bpf_get_current_task_btf()->flags & PF_KTHREAD) {
		count_lost(LOST_KERNEL, ret, out);
		return 0;
	}
	__u32 zero = 0;
	struct flow_val *nv = bpf_map_lookup_elem(&scratch, &zero);
	if (!nv)
		return 0;
	__builtin_memset(nv, 0, sizeof(*nv));
	describe(nv, sk, family, proto);
	add(nv, ret, out);
	if (bpf_map_update_elem(&flows, &k, nv, BPF_NOEXIST) == 0)
		return 0;
	// Another CPU created it meanwhile (the socket's first calls on two
	// CPUs at once), or the map is full.
	v = bpf_map_lookup_elem(&flows, &k);
	if (v)
		add(v, ret, out);
	else
		count_lost(LOST_MAP_FULL, ret, out);
	return 0;
}

// The fast path (issue 17: at most 100 ns per call). The per-CPU hash
// lookup above costs about 50 ns per call on the project's VM (hashing
// the 16-byte key, the bucket and the element); socket local storage is
// found from the socket itself in about 20 (a helper call), and a
// per-CPU cache of the sockets and tasks last seen on this CPU (sk_cache
// below) with no call at all. So each
// socket carries, in its local storage, the index of a slot of two
// arrays: counts (what the hot path adds to) and slot_descs (who and
// where, written once); the cache remembers the same for the sockets
// this CPU used last, checked against everything that names the
// conversation and the task. A slot outlives its socket, so nothing is lost when the
// socket is freed between two reads; user space frees a slot after idle
// reads by raising its generation (every socket and cache entry still
// pointing at it then misses, and the socket takes the slow path and
// gets a new slot) and, one read later, zeroing its counts and returning
// it to free_slots.
#define SLOTS 16384
// User space reads the two arrays through a memory mapping: a syscall
// per entry (batch lookups) took 29 ms a read.
#define BPF_F_MMAPABLE (1U << 10)

struct slot_desc {
	struct flow_key key;
	__u32 used; // 1 from allocation until user space frees the slot
	__u32 pad;
	struct flow_val v; // the description (counters unused)
};

// gen shares the counters' cache line, so the hot path reads one line;
// user space raises it with one aligned 8-byte store through the
// memory mapping, leaving the counters alone. Padded to a cache line
// (the mapped array starts page-aligned): two sockets busy on two CPUs
// must not bounce one line between them with every atomic add.
struct slot_cnt {
	__u64 gen;
	__u64 bytes_in;
	__u64 bytes_out;
	__u64 calls_in;
	__u64 calls_out;
	__u64 pad[3];
};

// owner packs the process, the slot and the slot's generation into one
// word, written with one store and read with one load: two processes
// taking the slow path on one socket at the same instant (a socket
// shared across fork) each write a whole owner, so a reader never sees
// one's PID with the other's slot. The generation is kept modulo 2^18
// (GEN_MASK), enough to tell a slot freed and reused while the socket
// slept: that takes 2^18 frees of the same slot.
#define SLOT_BITS 14 // SLOTS = 1 << SLOT_BITS
#define GEN_MASK ((1ULL << 18) - 1)
#define OWNER(pid, slot, gen) (((__u64)(pid) << 32) | (((gen) & GEN_MASK) << SLOT_BITS) | (slot))
#define OWNER_PID(o) ((__u32)((o) >> 32))
#define OWNER_SLOT(o) ((__u32)(o) & (SLOTS - 1))
#define OWNER_GEN(o) (((o) >> SLOT_BITS) & GEN_MASK)

struct sk_slot {
	__u64 owner;
	__u32 ports;
	__u32 pad;
};

// sk_cache: per CPU, the sockets last used on it, direct-mapped by port
// pair, each with the task that used it. An entry names the
// conversation completely (the socket's address, protocol, address and
// port pairs) so a freed socket whose memory now holds another
// conversation misses.
//
// The task is named without a helper call: on this project's CPUs a
// call costs 17-22 ns of the 100 a call may cost (the kernel's return
// thunks), and bpf_get_current_pid_tgid is one. A task is named by its
// kernel stack instead. Not by the program's own frame: recent kernels
// give tracing programs a per-CPU private stack, the same for every
// task (TestSharedSocketAttributed failed so). By ctx: the tracepoint's
// argument array is a local of the kernel's bpf_trace_runN, on the
// calling task's stack, which is THREAD_SIZE-aligned and THREAD_SIZE
// long (16 KiB on x86-64 and arm64, 32 KiB with KASAN), so its address
// masked to 16 KiB names one living task. The sock tracepoints fire in
// system calls, in the calling task's context. The address becomes a
// number through a store to fp_scratch and a load (the verifier allows
// the store to a program with CAP_PERFMON, which the agent needs
// anyway). A stack is reused
// only after its task exits, so every entry also carries the count of
// task exits (task_exit below) it was filled under and stops matching
// at the next exit anywhere: a task that inherited the socket and got a
// dead task's stack can never hit the dead task's entry. Entries are
// filled only on the path that checked the process with the helper,
// and only when the window is that task's own stack base (task->stack),
// so a kernel that kept the arguments elsewhere would run uncached,
// never wrong (with the program's private stack instead of ctx, this
// check turned the cache off and TestSharedSocketAttributed passed);
// and written by programs on their own CPU only; sk is cleared first
// and set last, so a program interrupting the write misses rather than
// reads half an entry.
struct sk_cache {
	__u64 sk;
	__u64 addrs;
	__u64 owner;
	__u64 kstack;
	__u64 exits;
	__u32 ports;
	__u16 proto;
	__u16 pad;
	__u64 pad2[2]; // one cache line an entry
};

// task_exits counts tasks that exited (sched_process_exit), threads
// included.
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} task_exits SEC(".maps");

// fp_scratch turns ctx's address into a number (see sk_cache).
struct fp_scratch {
	__u64 fp;
};
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fp_scratch);
} fp_scratch SEC(".maps");

// The smallest THREAD_SIZE of the kernels the agent supports: a mask no
// larger than the stack keeps two tasks' stacks apart (a larger stack
// only gives one task two names, and a miss).
#define KSTACK_ALIGN 16384ULL

// 256 ways, 16 KiB a CPU: a server's busy connections mostly hit (64
// sockets in turn: 118-130 ns a send against 130-171 with 8 ways).
#define CACHE_WAYS 256
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CACHE_WAYS);
	__type(key, __u32);
	__type(value, struct sk_cache);
} sk_cache SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sk_slot);
} sk_slots SEC(".maps");

// Not per-CPU (a fixed 2 MB whatever the CPU count): the adds are
// atomic, uncontended unless one socket is used on two CPUs at once.
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SLOTS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct slot_cnt);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SLOTS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct slot_desc);
} slot_descs SEC(".maps");

// Free slot indexes, filled by user space at start and as it frees.
struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, SLOTS);
	__uint(key_size, 0);
	__uint(value_size, sizeof(__u32));
} free_slots SEC(".maps");

static __always_inline void add_slot(struct slot_cnt *c, __u64 bytes, int out)
{
	if (out) {
		__sync_fetch_and_add(&c->bytes_out, bytes);
		__sync_fetch_and_add(&c->calls_out, 1);
	} else {
		__sync_fetch_and_add(&c->bytes_in, bytes);
		__sync_fetch_and_add(&c->calls_in, 1);
	}
}

static __always_inline void remember(struct sk_cache *e, __u64 sk, __u64 addrs, __u32 ports, __u16 proto, __u64 owner, __u64 kstack, __u64 exits)
{
	e->sk = 0;
	asm volatile("" ::: "memory");
	e->addrs = addrs;
	e->ports = ports;
	e->proto = proto;
	e->owner = owner;
	e->kstack = kstack;
	e->exits = exits;
	asm volatile("" ::: "memory");
	e->sk = sk;
}

static __always_inline int account(__u64 *ctx, struct sock *sk, int ret, int out)
{
	if (ret <= 0 || !sk)
		return 0;
	// sk is a trusted BTF pointer (tp_btf): plain loads, relocated by
	// CO-RE and checked by the verifier, cost far less than
	// bpf_probe_read_kernel calls. The family first: most sendmsg calls
	// on a host are on unix sockets, which leave here after one load.
	unsigned short family = sk->__sk_common.skc_family;
	if (family != AF_INET && family != AF_INET6)
		return 0;
	__u16 proto = sk->sk_protocol;
	if (proto != IPPROTO_TCP && proto != IPPROTO_UDP)
		return 0;

	struct flow_key k = {
		.sk = (__u64)sk,
		.ports = sk->__sk_common.skc_portpair,
	};
	// The task, by its kernel stack, and the task exits so far (see
	// sk_cache).
	__u32 zero = 0;
	__u64 *exitsp = bpf_map_lookup_elem(&task_exits, &zero);
	struct fp_scratch *fs = bpf_map_lookup_elem(&fp_scratch, &zero);
	if (!exitsp || !fs)
		return 0;
	__u64 exits = *exitsp;
	fs->fp = (__u64)ctx;
	asm volatile("" ::: "memory");
	__u64 kstack = fs->fp & ~(KSTACK_ALIGN - 1);
	// For IPv6 the pair is zero or v4-mapped: the cache then relies on
	// the socket's address, protocol, ports and task.
	__u64 addrs = sk->__sk_common.skc_addrpair;
	__u32 way = (k.ports ^ (k.ports >> 16)) & (CACHE_WAYS - 1);
	struct sk_cache *e = bpf_map_lookup_elem(&sk_cache, &way);
	struct slot_cnt *c;
	__u32 i;
	if (e && e->sk == k.sk && e->ports == k.ports && e->addrs == addrs && e->proto == proto && e->kstack == kstack && e->exits == exits) {
		i = OWNER_SLOT(e->owner);
		c = bpf_map_lookup_elem(&counts, &i);
		if (c && (c->gen & GEN_MASK) == OWNER_GEN(e->owner)) {
			add_slot(c, ret, out);
			return 0;
		}
	}

	// Not cached: the process, with the helper, and the socket's storage.
	// The entry is remembered only when the window named above is the
	// calling task's own stack (task->stack, its base): not where the
	// arguments are elsewhere (an interrupt's stack, or a kernel that
	// moved them), nor on a stack larger than 16 KiB whose upper half
	// holds them (KASAN), where the cache is simply not used.
	struct task_struct *cur = bpf_get_current_task_btf();
	k.pid = cur->tgid;
	if ((__u64)cur->stack != kstack)
		e = 0;
	struct sk_slot *s = bpf_sk_storage_get(&sk_slots, sk, 0, 0);
	if (s) {
		__u64 owner = s->owner;
		i = OWNER_SLOT(owner);
		c = bpf_map_lookup_elem(&counts, &i);
		if (c && (c->gen & GEN_MASK) == OWNER_GEN(owner)) {
			if (OWNER_PID(owner) == k.pid && s->ports == k.ports) {
				add_slot(c, ret, out);
				if (e)
					remember(e, k.sk, addrs, k.ports, proto, owner, kstack, exits);
				return 0;
			}
			// Another process using the socket (inherited across
			// fork): its calls go to the hash, the socket's slot
			// stays its owner's.
			if (OWNER_PID(owner) != k.pid)
				return account_hash(sk, ret, out, family, proto, &k);
		}
	}

	// The slow path: the socket's first call, its ports changed (a UDP
	// socket connected after its first datagrams), or its slot was
	// freed while it was idle.
	struct task_struct *task = bpf_get_current_task_btf();
	if (task->flags & PF_KTHREAD) {
		count_lost(LOST_KERNEL, ret, out);
		return 0;
	}
	if (bpf_map_pop_elem(&free_slots, &i) != 0)
		return account_hash(sk, ret, out, family, proto, &k); // no free slot
	i &= SLOTS - 1;
	struct slot_desc *d = bpf_map_lookup_elem(&slot_descs, &i);
	c = bpf_map_lookup_elem(&counts, &i);
	if (!d || !c)
		return 0;
	__builtin_memset(&d->v, 0, sizeof(d->v));
	describe(&d->v, sk, family, proto);
	d->key = k;
	// The description before used: user space reads a slot only once
	// used is set.
	asm volatile("" ::: "memory");
	d->used = 1;
	add_slot(c, ret, out);
	__u64 owner = OWNER(k.pid, i, c->gen);
	s = bpf_sk_storage_get(&sk_slots, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (s) {
		s->ports = k.ports;
		s->owner = owner;
	}
	if (e)
		remember(e, k.sk, addrs, k.ports, proto, owner, kstack, exits);
	return 0;
}

// Every task's exit, threads included (see sk_cache): one atomic add.
SEC("tp_btf/sched_process_exit")
int task_exit(__u64 *ctx)
{
	__u32 zero = 0;
	__u64 *v = bpf_map_lookup_elem(&task_exits, &zero);
	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

// TP_PROTO(struct sock *sk, int ret, int flags)
SEC("tp_btf/sock_send_length")
int sock_send(__u64 *ctx)
{
	return account(ctx, (struct sock *)ctx[0], (int)ctx[1], 1);
}

SEC("tp_btf/sock_recv_length")
int sock_recv(__u64 *ctx)
{
	// A peek leaves the data in the socket: it is counted when read.
	if ((int)ctx[2] & MSG_PEEK)
		return 0;
	return account(ctx, (struct sock *)ctx[0], (int)ctx[1], 0);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
