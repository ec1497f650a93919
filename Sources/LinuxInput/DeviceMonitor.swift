// Hot-plug: input event nodes added, removed or changed, as an async sequence. One thread per monitor
// sleeps in poll(2) on the event source and a wake-up pipe, so an idle monitor costs no CPU; there is
// no polling loop anywhere.
internal import Glibc
public import Logging
@_spi(Internals) public import LinuxSystem

/// One change of the set of input event nodes.
public struct DeviceEvent: Hashable, Sendable {
    public enum Kind: String, Hashable, Sendable {
        case added, removed, changed
    }

    public let kind: Kind
    /// The device as probed when it was added or changed; for a removal, as it was last seen.
    public let device: InputDevice

    public init(kind: Kind, device: InputDevice) {
        self.kind = kind
        self.device = device
    }
}

/// Why a monitor could not start.
public struct DeviceMonitorError: Error, Equatable, Sendable, CustomStringConvertible {
    public let source: DeviceMonitor.Source
    public let underlying: SystemCallError
    public var description: String { "watching input devices (\(source.rawValue) source) failed: \(underlying)" }
}

/// Watches input event nodes come and go. Iterate it once (it is a single-consumer sequence); ending
/// the iteration (the consuming task is cancelled, or the loop breaks) stops the thread and closes
/// its descriptors.
///
/// ```swift
/// for await event in try DeviceMonitor(logger: logger) { ... }
/// ```
public final class DeviceMonitor: AsyncSequence, Sendable {
    public typealias Element = DeviceEvent

    /// Where device events come from.
    public enum Source: String, CaseIterable, Hashable, Sendable {
        /// The udev daemon's netlink broadcasts: events after udev applied its rules (permissions,
        /// `ID_INPUT_JOYSTICK`). Needs a running udev daemon; without one it hears nothing.
        case udev
        /// The kernel's uevent netlink broadcasts: work without a udev daemon, but only in the initial
        /// network namespace (not in most containers). A node's permissions set after its uevent (by mdev, or
        /// by hand) are heard through inotify on `/dev/input`, as no uevent tells them.
        case kernel
        /// inotify on `/dev/input` (create, delete, attribute change, move), as SDL does in containers:
        /// works wherever `/dev/input` is visible.
        case inotify

        /// The source for this system: `udev` when a udev daemon runs (`/run/udev/control` exists), else
        /// `inotify` inside a container (where kernel uevents do not arrive), else `kernel`.
        public static var automatic: Source { chosen(exists: Sys.exists) }

        /// `automatic` on a system where `exists` says which files are there.
        package static func chosen(exists: (String) -> Bool) -> Source {
            if exists(udevDaemonControlPath) { return .udev }
            if containerMarkers.contains(where: exists) { return .inotify }
            return .kernel
        }

        /// Files that container runtimes create inside their containers: Docker, Podman, Flatpak, and systemd's
        /// own mark (systemd-nspawn, and systemd as the init of an LXC or other container, write the runtime's name
        /// there; a host never has it).
        static let containerMarkers = [
            "/.dockerenv", "/run/.containerenv", "/.flatpak-info", "/run/systemd/container",
        ]
    }

    public let source: Source
    /// The devices present when the monitor started (probed, with ids); events describe changes from here.
    public let initialDevices: [InputDevice]
    private let pending: Lock<MonitorWorker?>
    private let stream: AsyncStream<DeviceEvent>
    private let continuation: AsyncStream<DeviceEvent>.Continuation

    /// Hot-plug events are few (one per node per plug); this bounds memory if nobody consumes them.
    private static let bufferedEventLimit = 1024

    /// Opens the event source and takes a snapshot of the present devices (so removals can name them).
    /// Events start flowing when iteration starts.
    public convenience init(source: Source = .automatic, logger: Logger) throws(DeviceMonitorError) {
        try self.init(source: source, snapshot: nil, logger: logger)
    }

    /// Opens the event source and takes `snapshot` as the present devices rather than probing every node
    /// again: every event node with its id, as a listing of `DeviceDiscovery` made just before, probed as that
    /// listing chose (an engine's opens no node: `DeviceDiscovery.Probing.noNode`); the snapshot names removals and
    /// is `initialDevices`.
    /// A node added or removed between that listing and the source's opening is not announced unless a
    /// comparison with sysfs, made when events were lost (a full socket or inotify queue, or `/dev/input` made
    /// again), finds the difference. Without a
    /// snapshot the monitor lists every node itself, after its source opened, probed as `probing` says.
    package init(
        source: Source = .automatic, snapshot: [InputDevice]?, probing: DeviceDiscovery.Probing = .everyNode,
        logger: Logger
    ) throws(DeviceMonitorError) {
        self.source = source
        (stream, continuation) = AsyncStream.makeStream(
            of: DeviceEvent.self, bufferingPolicy: .bufferingOldest(Self.bufferedEventLimit))
        let worker: MonitorWorker
        do throws(SystemCallError) {
            worker = try MonitorWorker(source: source, snapshot: snapshot, probing: probing, logger: logger)
        } catch {
            throw DeviceMonitorError(source: source, underlying: error)
        }
        initialDevices = worker.initialDevices
        pending = Lock(worker)
        logger.info("watching input devices", metadata: ["source": "\(source.rawValue)"])
    }

    deinit {
        // Never iterated: close the descriptors here. Once iteration started, the thread owns them.
        pending.withLock { $0.take() }?.close()
        continuation.finish()
    }

    /// The descriptors the monitor holds before iteration starts (source, wake-up pipe), for tests.
    var descriptorsBeforeIteration: [Int32] {
        pending.withLock { $0?.descriptors } ?? []
    }

    /// Starts the monitor thread on the first call. Ending the iteration in any way (the loop breaks,
    /// the consuming task is cancelled, the iterator is dropped) stops it and closes its descriptors.
    public func makeAsyncIterator() -> Iterator {
        guard let worker = pending.withLock({ $0.take() }) else {
            return Iterator(base: stream.makeAsyncIterator(), stopper: nil)
        }
        let continuation = continuation
        let wake = worker.wake
        continuation.onTermination = { _ in wake.signal() }
        do throws(SystemCallError) {
            try Sys.startThread {
                worker.run { continuation.yield($0) }
                continuation.finish()
            }
        } catch {
            worker.logger.info("could not start the device monitor thread", metadata: ["error": "\(error)"])
            worker.close()
            continuation.finish()
        }
        return Iterator(base: stream.makeAsyncIterator(), stopper: ThreadStopper(wake))
    }

    /// Starts the monitor thread and calls `handler` on it for each event, with no task or queue in between:
    /// nothing else wakes while devices stay as they are. `ended` runs on that thread once the monitor stops:
    /// with `true` after `Subscription.stop()`, with `false` when its source failed. A monitor starts once;
    /// nil when it was already started, or when its thread could not start (`ended` is not called then).
    public func start(
        _ handler: @escaping @Sendable (DeviceEvent) -> Void, ended: @escaping @Sendable (_ stopped: Bool) -> Void
    ) -> Subscription? {
        guard let worker = pending.withLock({ $0.take() }) else { return nil }
        let subscription = Subscription(wake: worker.wake)
        do throws(SystemCallError) {
            try Sys.startThread {
                worker.run(handler)
                ended(subscription.isStopped)
            }
        } catch {
            worker.logger.info("could not start the device monitor thread", metadata: ["error": "\(error)"])
            worker.close()
            return nil
        }
        return subscription
    }

    /// A started monitor's thread, stopped through `stop()`.
    public final class Subscription: Sendable {
        private let wake: WakeChannel
        private let stopped = Lock(false)

        init(wake: WakeChannel) { self.wake = wake }

        var isStopped: Bool { stopped.withLock { $0 } }

        /// Wakes the monitor thread to stop; its descriptors are closed on the way out.
        public func stop() {
            stopped.withLock { $0 = true }
            wake.signal()
        }
    }

    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncStream<DeviceEvent>.Iterator
        /// Wakes the thread to stop when the last copy of the iterator goes away: the stream's own
        /// termination handler does not run then, because the thread's continuation keeps it alive.
        let stopper: ThreadStopper?

        public mutating func next() async -> DeviceEvent? { await base.next() }
    }

    final class ThreadStopper: Sendable {
        let wake: WakeChannel
        init(_ wake: WakeChannel) { self.wake = wake }
        deinit { wake.signal() }
    }
}

/// A pipe whose only job is to wake the monitor thread out of poll(2).
final class WakeChannel: Sendable {
    private let ends: Lock<(read: Int32, write: Int32)?>

    init() throws(SystemCallError) {
        ends = Lock(try Sys.pipe())
    }

    deinit { close() }

    var readEnd: Int32 { ends.withLock { $0?.read ?? -1 } }
    var writeEnd: Int32 { ends.withLock { $0?.write ?? -1 } }

    func signal() {
        ends.withLock { ends in
            guard let ends else { return }
            var byte: UInt8 = 1
            // A full pipe already holds a wake-up; EAGAIN is fine.
            _ = try? withUnsafeBytes(of: &byte) { (bytes) throws(SystemCallError) in try Sys.write(ends.write, bytes) }
        }
    }

    func close() {
        ends.withLock { ends in
            if let open = ends {
                Sys.close(open.read)
                Sys.close(open.write)
            }
            ends = nil
        }
    }
}

/// The state of one monitor: its event source, the devices it knows, and the loop its thread runs.
/// Created by `DeviceMonitor.init`, then used by the monitor thread alone.
final class MonitorWorker: @unchecked Sendable {
    // `@unchecked`: libudev handles are not thread-safe; this object is handed from the creating thread
    // to the monitor thread once and never touched by another thread afterwards.
    let source: DeviceMonitor.Source
    let logger: Logger
    let wake: WakeChannel
    private let discovery: DeviceDiscovery
    private let context: UdevContext
    private var netlink: UdevMonitor?
    private var inotify: DeviceDirectoryWatch?
    /// With the kernel source: attribute changes in `/dev/input`, for permissions set after a node's uevent.
    private var attributes: DeviceDirectoryWatch?
    /// Known event nodes by sysfs name (`event5`): the last description of each, for removals.
    private var known: [String: InputDevice] = [:]
    /// With the inotify source: the file of each known node in `/dev/input` (its file system and inode), as it was
    /// when the node was described, for `isKnownNodePresent`. A known node has one, except a node of the snapshot
    /// listed while sysfs listed it and `/dev/input` had no file for it yet (the kernel makes the sysfs folder before
    /// devtmpfs makes the node): its first file is its own. (The monitor describes no other node without a file.)
    private var knownFiles: [String: Sys.FileStatus] = [:]
    /// With the udev source: the nodes the daemon is known to have processed (its `add` heard, or found initialized
    /// by a comparison with sysfs, or just before the monitor's own listing). The daemon's `add` of a node known and
    /// processed is one told already; a node listed before the daemon processed it (a snapshot lists nodes as sysfs
    /// has them) is told again at the daemon's `add`, which says its rules, permissions and links are in place.
    private var processedByUdev: Set<String> = []
    /// The netlink sources' nodes that wait for their parent's driver to finish binding (see `BindGate`).
    private var gate = BindGate()
    /// A comparison with sysfs is owed: one made after an overflow while events may still have been dropped (a
    /// failure ended the drain before the socket's queue was empty: an `ENOBUFS` the kernel told again at once, for
    /// an overflow that came while libudev read on; the kernel drops events without a word until the queue is
    /// empty, so the next drain that empties it compares again), or one that could not list sysfs (made at the
    /// next drain, by either source, or by `comparisonRetry` when no event brings one).
    private var comparisonOwed = false {
        didSet {
            if comparisonOwed {
                comparisonRetry.owed(now: Sys.monotonicNanoseconds())
            } else {
                comparisonRetry.made()
            }
        }
    }
    /// When an owed comparison is made if no event brings a read first.
    private(set) var comparisonRetry = ComparisonRetry()
    /// The listings of sysfs that failed in a row: the first failure is logged at info, the ones after it (every retry
    /// while sysfs cannot be listed) at debug, and the listing that works again at info.
    private var listingFailures = 0
    let initialDevices: [InputDevice]

    init(
        source: DeviceMonitor.Source, snapshot: [InputDevice]? = nil, probing: DeviceDiscovery.Probing = .everyNode,
        logger: Logger
    ) throws(SystemCallError) {
        self.source = source
        self.logger = logger
        discovery = DeviceDiscovery(logger: logger)
        context = try UdevContext()
        wake = try WakeChannel()
        // The source opens before the snapshot, so a device plugged in between is not missed. (On a
        // throw, the pipe is closed by WakeChannel's deinit.)
        switch source {
        case .udev, .kernel:
            // The parents' events (`add`, `bind`...) arrive on the same socket, in order with the nodes'.
            let netlink = try UdevMonitor(
                context: context, group: source == .udev ? .udev : .kernel,
                subsystems: ["input"] + BindGate.parentSubsystems.sorted())
            do throws(SystemCallError) {
                try netlink.setReceiveBufferSize(UdevMonitor.burstBufferBytes)
            } catch {
                // Expected without CAP_NET_ADMIN: the buffer is then as large as `net.core.rmem_max` lets it be.
                logger.debug(
                    "the device event socket keeps the buffer the system allows",
                    metadata: ["bytes": "\(UdevMonitor.burstBufferBytes)", "error": "\(error)"])
            }
            self.netlink = netlink
            if source == .kernel {
                do throws(SystemCallError) {
                    attributes = try DeviceDirectoryWatch(mask: DeviceDirectoryWatch.attributeMask, logger: logger)
                } catch {
                    logger.info(
                        "no watch on /dev/input: a node's permissions changed after it was added go unheard",
                        metadata: ["error": "\(error)"])
                }
            }
        case .inotify:
            inotify = try DeviceDirectoryWatch(logger: logger)
        }
        // Looked at before the listing: a node the daemon processes in between is listed as not processed, and told
        // again at its `add` (which a node processed already before this look sent before the source opened). Not
        // for a snapshot given, listed before the source opened: whether the daemon had processed its nodes then is
        // not known, and their `add`s are told. (What the snapshot read is no proof: the daemon's database of a node
        // may be another device's, gone under the same node number, and it is written before the rules' last
        // programs, which set a desktop user's access, have run. Taken for proof, for a few hours on 7 December, it
        // lost such a pad's `add`.) So the first comparison tells a snapshot's pads added again, which an engine
        // takes as it takes a change.
        let processed = source == .udev && snapshot == nil ? Self.processedNodes(in: context) : []
        if let snapshot {
            initialDevices = snapshot
        } else {
            do throws(DeviceDiscoveryError) {
                initialDevices = try discovery.devices(probing: probing)
            } catch {
                logger.info("no initial device snapshot", metadata: ["error": "\(error)"])
                initialDevices = []
            }
        }
        for device in initialDevices { known[device.identity.sysName] = device }
        processedByUdev = processed.intersection(known.keys)
        // The nodes' files as they are once the source is open: the creation record of a node listed in the
        // snapshot, queued between the source's opening and the listing, or still to come for a node listed before
        // devtmpfs made its file, then tells nothing (the node is one of `initialDevices` already).
        if source == .inotify {
            for sysName in known.keys { knownFiles[sysName] = nodeFile(sysName) }
        }
    }

    func close() {
        netlink = nil
        inotify = nil
        attributes = nil
        wake.close()
    }

    var descriptors: [Int32] {
        [netlink?.fileDescriptor, inotify?.fileDescriptor, attributes?.fileDescriptor, wake.readEnd, wake.writeEnd]
            .compactMap { $0 }
    }

    /// Sleeps in poll(2) until the source or the wake-up pipe is readable, or until a node waiting for its
    /// parent's bind reaches its deadline; returns when woken or when the source fails.
    func run(_ deliver: (DeviceEvent) -> Void) {
        defer {
            close()
            logger.debug("device monitor stopped")
        }
        guard let sourceDescriptor = netlink?.fileDescriptor ?? inotify?.fileDescriptor else { return }
        var fds = [
            pollfd(fd: sourceDescriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wake.readEnd, events: Int16(POLLIN), revents: 0),
        ]
        if let attributes { fds.append(pollfd(fd: attributes.fileDescriptor, events: Int16(POLLIN), revents: 0)) }
        while true {
            do throws(SystemCallError) {
                _ = try Sys.poll(&fds, timeout: pollTimeout())
            } catch {
                logger.info("device monitor poll failed", metadata: ["error": "\(error)"])
                return
            }
            if fds[1].revents != 0 { return }
            // A netlink socket that overflowed shows it as POLLERR until a receive reads its ENOBUFS.
            if fds[0].revents & Int16(POLLIN) != 0 || (netlink != nil && fds[0].revents & Int16(POLLERR) != 0) {
                for event in drain() { deliver(event) }
            } else if fds[0].revents != 0 {
                logger.info("device monitor source failed", metadata: ["revents": "\(fds[0].revents)"])
                return
            }
            // After the netlink events of the same wake-up, so that a node added and given its permissions at
            // once is known by the time its attribute change is read.
            if fds.count > 2, fds[2].revents & Int16(POLLIN) != 0 {
                for event in attributeChanges() { deliver(event) }
            } else if fds.count > 2, fds[2].revents != 0 {
                logger.info("the watch on /dev/input failed", metadata: ["revents": "\(fds[2].revents)"])
                attributes = nil
                fds.removeLast()
            }
            for event in overdue() { deliver(event) }
            if comparisonRetry.isDue(now: Sys.monotonicNanoseconds()) {
                let due = comparisonRetry.deadline
                for event in drain() { deliver(event) }
                comparisonRetry.drained(now: Sys.monotonicNanoseconds(), due: due)
            }
        }
    }

    /// Milliseconds until the first waiting node's deadline or the owed comparison's retry; -1 (no timeout) when
    /// neither is due.
    private func pollTimeout() -> Int32 {
        guard let deadline = [gate.nextDeadline, comparisonRetry.deadline].compactMap({ $0 }).min() else { return -1 }
        let now = Sys.monotonicNanoseconds()
        guard deadline > now else { return 0 }
        return Int32(clamping: (deadline - now + 999_999) / 1_000_000)
    }

    /// The nodes whose parent never said it bound, opened now that their wait is over.
    private func overdue() -> [DeviceEvent] {
        gate.expired(now: Sys.monotonicNanoseconds()).flatMap { sysName in
            logger.warning(
                "no bind event from the node's parent in time; opening it anyway",
                metadata: ["node": "\(sysName)", "seconds": "\(BindGate.hangNanoseconds / 1_000_000_000)"])
            return apply((.added, sysName))
        }
    }

    /// Everything waiting on the source, turned into device events.
    func drain() -> [DeviceEvent] {
        if let netlink {
            // One at a time, in the socket's order: a parent's `bind` follows its nodes' `add`s.
            var events: [DeviceEvent] = []
            var overflowed = false
            var emptied = false
            receiving: while true {
                switch netlink.receive() {
                case .device(let device):
                    events += received(device).flatMap(apply)
                case .overflowed:
                    // The events still waiting came before or after the ones dropped, and are read on; what the
                    // dropped ones said is found once they are, by comparing with sysfs.
                    overflowed = true
                case .nothing:
                    // After an overflow the kernel drops every event, telling ENOBUFS no more, until the socket's
                    // queue is empty; a libudev that says "nothing" for each message it drops may say it while more
                    // wait. So the comparison waits for an empty queue, after which no event goes unheard.
                    emptied = !netlink.hasWaitingMessage
                    guard (overflowed || comparisonOwed) && !emptied else { break receiving }
                case .failed(let errno):
                    logger.debug("a device event could not be read", metadata: ["error": "\(errno)"])
                    break receiving
                }
            }
            if overflowed || (comparisonOwed && emptied) {
                logger.log(
                    level: overflowed || listingFailures == 0 ? .info : .debug,
                    overflowed
                        ? "device events were lost (the socket's buffer overflowed): comparing with sysfs"
                        : "comparing with sysfs again, as owed since an earlier drain")
                let missed = missedChanges()
                events += (missed ?? []).flatMap(apply)
                // A comparison made starts the retries again at a second, even when it is owed again (the queue was
                // not emptied): the wait grown by listings that failed before it is over.
                if missed != nil { comparisonRetry.made() }
                comparisonOwed = !emptied || missed == nil
            }
            return events
        }
        if let inotify {
            let read = inotify.readChanges()
            // Records lost (an overflow, or `/dev/input` made again): sysfs is compared with the nodes known, once,
            // in place of every record read with them. Told after those records, the comparison (made against the
            // nodes known before them) told again what they had told, or undid it: a gone pad's last record before
            // the overflow, read once another pad was made under its name, was told of the new pad under the gone
            // one's id, which the comparison then removed and added again; the gone pad's removal was never told.
            // When sysfs cannot be listed, the records are told as read, and the comparison is made at the next read.
            // (The comparison looks at `/dev/input` as well as sysfs, see `missedChanges`: the kernel deletes a
            // device's node before its sysfs folder, so a deletion record read with it may be of a pad sysfs lists.)
            if read.contains(.rescan) || comparisonOwed {
                if let missed = missedChanges() {
                    comparisonOwed = false
                    return missed.flatMap(apply)
                }
                comparisonOwed = true
            }
            var events: [DeviceEvent] = []
            for case .node(let kind, let sysName) in read {
                // An attribute change of a known node is told as the kernel source's are (`attributeChanges`): for
                // the very device known, when its access changed. A node's unlink changes its link count, so a pad's
                // removal is an `IN_ATTRIB` then an `IN_DELETE`: read once another pad was made under the same
                // name, that change was told of the new pad, under the gone one's id. A change of a node not known
                // (its probe failed when it was made) is its arrival (`apply`).
                guard kind != .changed || known[sysName] == nil || accessChanged(sysName) else { continue }
                // The record of a change that a comparison before it told already (a change made before the comparison's
                // listing, its record queued after the read that found the queue empty) finds the node known present:
                // a creation is the known node's own, a deletion an earlier node's. A node of the snapshot that had no
                // file yet takes its first (its creation record): its access, denied without a file, is told changed.
                let hadNoFile = known[sysName] != nil && knownFiles[sysName] == nil
                if kind != .changed, isKnownNodePresent(sysName) {
                    if hadNoFile, accessChanged(sysName) { events += apply((.changed, sysName)) }
                    continue
                }
                events += apply((kind, sysName))
            }
            return events
        }
        return []
    }

    /// The kernel source's attribute changes, as `changed` events: only for nodes already announced (a node's
    /// `add` comes from netlink, after its parent's bind), only for the very device announced (its sysfs path, which
    /// names its `inputN`: a node removed and made again for another device under the same name, whose attribute
    /// change can be read before netlink's `remove` and `add`, is left to them, in their order), and only when this
    /// process's access to it changed between permission states (a node gone meanwhile is netlink's removal). When
    /// records were lost (the watch's queue overflowed), every node known is looked at, as a record of each would have
    /// had it.
    private func attributeChanges() -> [DeviceEvent] {
        guard let attributes else { return [] }
        var names: [String] = []
        let changes = attributes.readChanges()
        for change in changes {
            guard case .node(.changed, let sysName) = change, !names.contains(sysName) else { continue }
            names.append(sysName)
        }
        if changes.contains(.rescan) {
            names = known.keys.sorted { eventNumber($0) < eventNumber($1) }
        }
        return names.filter(accessChanged).flatMap { apply((.changed, $0)) }
    }

    /// The `eventN` nodes sysfs lists whose device the udev daemon has processed (none when sysfs cannot be listed:
    /// their `add`s are then told again).
    private static func processedNodes(in context: UdevContext) -> Set<String> {
        let paths = (try? context.syspaths(subsystem: "input")) ?? []
        return Set(
            paths.compactMap { path in
                context.device(syspath: path).flatMap {
                    $0.sysName.hasPrefix(eventNodePrefix) && $0.isInitialized ? $0.sysName : nil
                }
            })
    }

    /// Whether the node `/dev/input/<sysName>` is now the very file described when the node was made known (its inode,
    /// not made again since) and sysfs names the known device's `inputN` for it. By the node's file alone for the
    /// deletions: the kernel removes a device's node before its sysfs folder, so sysfs still lists a device whose node
    /// was just deleted. A node made again is a new file, with an inode number of its own (tmpfs and devtmpfs number
    /// their files from one counter).
    /// A node of the snapshot described with no file yet (see `knownFiles`) takes the first file it has as its own,
    /// when sysfs names the known device for it.
    private func isKnownNodePresent(_ sysName: String) -> Bool {
        guard let device = known[sysName], let now = nodeFile(sysName) else { return false }
        if let file = knownFiles[sysName] {
            guard now.device == file.device, now.inode == file.inode else { return false }
        }
        guard context.device(subsystem: "input", sysName: sysName)?.syspath == device.identity.sysPath else {
            return false
        }
        knownFiles[sysName] = now
        return true
    }

    /// The file of the node `/dev/input/<sysName>` now; nil when there is none.
    private func nodeFile(_ sysName: String) -> Sys.FileStatus? {
        try? Sys.stat("\(DeviceDirectoryWatch.inputDirectory)/\(sysName)")
    }

    /// Whether the node announced as `sysName` is still the very device announced (its sysfs path names its
    /// `inputN`) and this process's access to it changed between permission states.
    private func accessChanged(_ sysName: String) -> Bool {
        guard let before = known[sysName], !gate.isWaiting(sysName),
            let now = discovery.device(sysName: sysName, in: context, settle: false),
            now.identity.sysPath == before.identity.sysPath
        else { return false }
        return Self.isAccessChange(from: before.access, to: now.access)
    }

    /// Whether access going from `before` to `now` is a change to tell: to another state (its reason's words aside: a
    /// snapshot listed without opening a node words them as `access(2)` does, the monitor's probe as its open does),
    /// and one of permissions (read-write, or limited by permissions; a node gone is its removal).
    static func isAccessChange(from before: DeviceAccess, to now: DeviceAccess) -> Bool {
        !now.isSameState(as: before) && (now == .readWrite || now.isPermissionProblem)
    }

    /// What one netlink event changes: a node's `add` waits in the gate while its parent is binding; a
    /// parent's `bind` releases the nodes that waited for it.
    private func received(_ device: UdevDevice) -> [(kind: DeviceEvent.Kind, sysName: String)] {
        guard let action = device.action else { return [] }
        guard device.subsystem == "input" else {
            let released = gate.parentEvent(action: action, syspath: device.syspath)
            return released.map { (.added, $0) }
        }
        let sysName = device.sysName
        guard sysName.hasPrefix(eventNodePrefix) else { return [] }
        // A record of the very device known under the name (its sysfs path, which names its `inputN`) adds nothing,
        // and one of another removes nothing: a comparison with sysfs, made before the record was read (after the
        // drain that found the socket empty, before its listing), told both already, or the device was listed when
        // the monitor opened. Told again, a node deleted and made again for another pad was that pad's removal and
        // arrival a second time (an engine bound to it interrupted and reset for nothing).
        // (A `remove` of another device waiting for its parent's bind under a known name is not: the gate forgets the
        // node, and the device known there, gone since the name is another's, is told removed.)
        if let knownPath = known[sysName]?.identity.sysPath,
            action == "add" && knownPath == device.syspath && (source != .udev || processedByUdev.contains(sysName))
                || action == "remove" && knownPath != device.syspath && !gate.isWaiting(sysName)
        {
            logger.debug("a device event told already", metadata: ["node": "\(sysName)", "action": "\(action)"])
            return []
        }
        if source == .udev {
            if action == "add" { processedByUdev.insert(sysName) }
            if action == "remove" { processedByUdev.remove(sysName) }
        }
        switch action {
        case "add":
            let decision = gate.nodeAdded(sysName, parent: parentInfo(of: device), now: Sys.monotonicNanoseconds())
            guard case .waitForBind(let parent) = decision else { return [(.added, sysName)] }
            logger.debug("node waits for its parent to bind", metadata: ["node": "\(sysName)", "parent": "\(parent)"])
            return []
        case "remove":
            // A node that went while waiting and is not known was never announced, so its removal is not either. A
            // known node can wait too: the daemon's `add` of a node not known to be processed, or a comparison that
            // found it processed since, sends it through the gate (as does the `add` of another device under a known
            // name, whose older device's removal was not heard: a snapshot's pad gone before the source opened). Its
            // removal is told, of the device known: until 7 December the gate forgot it and nothing was told (after
            // `udevadm trigger --action=add`, a pad unplugged before its parent's `bind` stayed known, and an engine
            // bound to it never heard it go).
            return gate.nodeRemoved(sysName) && known[sysName] == nil ? [] : [(.removed, sysName)]
        case "change":
            return gate.isWaiting(sysName) ? [] : [(.changed, sysName)]
        default:
            return []
        }
    }

    /// The device above the node's `inputN` (a HID device, a USB interface...), as sysfs shows it now; nil
    /// when there is none (uinput) or the node is already gone.
    private func parentInfo(of node: UdevDevice) -> BindGate.Parent? {
        guard let parent = node.parent(subsystem: "input")?.parent, let subsystem = parent.subsystem else {
            return nil
        }
        return BindGate.Parent(syspath: parent.syspath, subsystem: subsystem, hasDriverLink: parent.hasDriverLink)
    }

    /// What the events lost would have told (the netlink events the kernel dropped from a full socket; the inotify
    /// records of a full queue, or of a `/dev/input` removed and made again), found by comparing the nodes sysfs
    /// lists now with the nodes known and waiting: a known node gone, or made again for another device (its sysfs
    /// path, which names its `inputN`, differs), is removed; a node present and neither known nor waiting is added,
    /// through the gate as its `add` would have been (a parent whose `bind` was lost keeps it waiting until the
    /// deadline; the inotify source, which hears no `bind`, adds it at once); a known node whose access changed is
    /// changed; a waiting node gone is forgotten. With the udev source a node the daemon has not processed yet is
    /// left to its own event, still to come: were it dropped too, the socket would overflow again and bring
    /// another comparison. With the inotify source a node is present when `/dev/input` has its file as well: the
    /// kernel deletes a device's node before its sysfs folder, so a known node whose file is gone is removed (its
    /// deletion record may be among the records the comparison stands for), and a node without a file is not added
    /// (`apply`: its creation record, still to come, adds it; a node made and deleted already is told nothing). A
    /// node of the snapshot still waiting for its first file (`knownFiles`) is kept. Nil when sysfs could not be
    /// listed.
    private func missedChanges() -> [(kind: DeviceEvent.Kind, sysName: String)]? {
        let present: [String: UdevDevice]
        do throws(SystemCallError) {
            present = Dictionary(
                try context.syspaths(subsystem: "input").compactMap { path -> (String, UdevDevice)? in
                    guard let device = context.device(syspath: path), device.sysName.hasPrefix(eventNodePrefix) else {
                        return nil
                    }
                    return (device.sysName, device)
                }, uniquingKeysWith: { first, _ in first })
        } catch {
            listingFailures += 1
            logger.log(
                level: listingFailures == 1 ? .info : .debug,
                "listing input devices after lost events failed: comparing again at the next read",
                metadata: ["error": "\(error)", "failures": "\(listingFailures)"])
            return nil
        }
        if listingFailures > 0 {
            logger.info("listing input devices works again", metadata: ["failures": "\(listingFailures)"])
            listingFailures = 0
        }
        let byNumber = { (a: String, b: String) in eventNumber(a) < eventNumber(b) }
        for sysName in gate.waitingNodes where present[sysName] == nil { _ = gate.nodeRemoved(sysName) }
        let removed = known.keys.filter {
            present[$0]?.syspath != known[$0]?.identity.sysPath || (knownFiles[$0] != nil && nodeFile($0) == nil)
        }.sorted(by: byNumber)
        // With the udev source, known nodes the daemon finished with since they were listed: told added again, as
        // its `add` (among the events this comparison stands for, or read after it and then told already) would have
        // told them, through the bind gate as that `add` went; their access comes with it.
        let processed = source == .udev ? present.filter { $0.value.isInitialized } : [:]
        let newlyProcessed = known.keys.filter {
            !removed.contains($0) && !processedByUdev.contains($0) && processed[$0] != nil
        }.sorted(by: byNumber)
        if source == .udev { processedByUdev = Set(processed.keys) }
        let changed = known.keys.filter { !removed.contains($0) && !newlyProcessed.contains($0) && accessChanged($0) }
            .sorted(by: byNumber)
        var added: [String] = []
        for (sysName, device) in present.sorted(by: { byNumber($0.key, $1.key) })
        where (known[sysName] == nil || removed.contains(sysName)) && !gate.isWaiting(sysName)
            && (source != .udev || device.isInitialized)
        {
            guard source != .inotify else {
                added.append(sysName)
                continue
            }
            let decision = gate.nodeAdded(sysName, parent: parentInfo(of: device), now: Sys.monotonicNanoseconds())
            if decision == .openNow { added.append(sysName) }
        }
        for sysName in newlyProcessed {
            guard let device = processed[sysName] else { continue }
            let decision = gate.nodeAdded(sysName, parent: parentInfo(of: device), now: Sys.monotonicNanoseconds())
            if decision == .openNow { added.append(sysName) }
        }
        return removed.map { (.removed, $0) } + changed.map { (.changed, $0) } + added.map { (.added, $0) }
    }

    /// Updates `known` for one change and describes it: no event when there is nothing to tell (a device that
    /// vanished before it could be probed, a removal of a device never seen), two when a known node was made again
    /// for another device.
    private func apply(_ change: (kind: DeviceEvent.Kind, sysName: String)) -> [DeviceEvent] {
        switch change.kind {
        case .removed:
            knownFiles[change.sysName] = nil
            guard let device = known.removeValue(forKey: change.sysName) else {
                logger.debug("removal of an unknown node", metadata: ["node": "\(change.sysName)"])
                return []
            }
            return [DeviceEvent(kind: .removed, device: device)]
        case .added, .changed:
            // Taken before the probe: a node made again between the two is then another file than the one recorded,
            // and its records are told. With the inotify source a node without a file is left to its records: its
            // creation record, still to come (sysfs lists a device before devtmpfs makes its node), or its deletion
            // record, read after (the kernel deletes the node before the sysfs folder). Described now, a pad made and
            // unplugged at once was told added and never removed.
            let file = source == .inotify ? nodeFile(change.sysName) : nil
            guard source != .inotify || file != nil else {
                logger.debug("node has no file in /dev/input", metadata: ["node": "\(change.sysName)"])
                return []
            }
            guard
                var device = discovery.device(
                    sysName: change.sysName, in: context, settle: source == .inotify && change.kind == .added)
            else {
                logger.debug("node vanished before it could be probed", metadata: ["node": "\(change.sysName)"])
                return []
            }
            var events: [DeviceEvent] = []
            var wasKnown = known[change.sysName]
            // A known node whose sysfs path (which names its `inputN`) is another now was made again for another
            // device, and the known one's removal went unheard (lost with a full socket or queue while sysfs could not
            // be listed, or before the source opened, after a snapshot): it is told removed, under its own id, then
            // the new device added, under its own. An engine finds removals by id: told under the gone device's id,
            // the new one's arrival left an engine bound to the gone one waiting for a removal never told.
            if let gone = wasKnown, gone.identity.sysPath != device.identity.sysPath {
                known[change.sysName] = nil
                wasKnown = nil
                events.append(DeviceEvent(kind: .removed, device: gone))
            }
            device.id = wasKnown?.id ?? freeID(for: device)
            known[change.sysName] = device
            knownFiles[change.sysName] = file
            // A "change" for a node not known yet (its "add" was missed, or came before the snapshot's source
            // opened) is an add. (A record of a creation of the very node known tells nothing before it comes here:
            // `received` for netlink's, `isKnownNodePresent` for inotify's.)
            events.append(DeviceEvent(kind: wasKnown == nil ? .added : change.kind, device: device))
            return events
        }
    }

    /// The device's stable id, suffixed when an identical device already holds it (see `StableDeviceID`).
    private func freeID(for device: InputDevice) -> StableDeviceID {
        let taken = Set(known.values.map(\.id))
        let base = device.identity.stableID
        var candidate = base
        var suffix = 1
        while taken.contains(candidate) {
            suffix += 1
            candidate = StableDeviceID(rawValue: "\(base.rawValue)-\(suffix)")
        }
        return candidate
    }
}
