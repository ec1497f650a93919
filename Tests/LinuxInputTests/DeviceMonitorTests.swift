import Foundation
import Glibc
import Testing
import LinuxHapticsTesting
@_spi(Internals) import LinuxSystem
@testable import LinuxInput

@Suite struct InotifyParsingTests {
    /// Bytes as the kernel writes them: header (wd, mask, cookie, len) then `len` NUL-padded name bytes.
    private func record(watch: Int32, mask: UInt32, name: String, padTo length: Int) -> [UInt8] {
        var header = inotify_event()
        header.wd = watch
        header.mask = mask
        header.len = UInt32(length)
        var bytes = withUnsafeBytes(of: header) { Array($0) }
        let nameBytes = Array(name.utf8)
        bytes += nameBytes + [UInt8](repeating: 0, count: length - nameBytes.count)
        return bytes
    }

    @Test func splitsRecordsAndStripsPadding() {
        let bytes =
            record(watch: 2, mask: UInt32(IN_CREATE), name: "event5", padTo: 16)
            + record(watch: 2, mask: UInt32(IN_DELETE), name: "js0", padTo: 16)
            + record(watch: 1, mask: UInt32(IN_IGNORED), name: "", padTo: 0)
        let records = bytes.withUnsafeBytes { InotifyRecord.parse($0) }
        #expect(
            records == [
                InotifyRecord(watch: 2, mask: UInt32(IN_CREATE), name: "event5"),
                InotifyRecord(watch: 2, mask: UInt32(IN_DELETE), name: "js0"),
                InotifyRecord(watch: 1, mask: UInt32(IN_IGNORED), name: ""),
            ])
    }

    @Test func stopsAtATruncatedRecord() {
        let whole = record(watch: 2, mask: UInt32(IN_CREATE), name: "event5", padTo: 16)
        let truncated = whole + Array(record(watch: 2, mask: UInt32(IN_DELETE), name: "event6", padTo: 16).prefix(20))
        let records = truncated.withUnsafeBytes { InotifyRecord.parse($0) }
        #expect(records.map(\.name) == ["event5"])
    }

    @Test func onlyEventNodesCount() {
        #expect(
            DeviceDirectoryWatch.nodeChange(mask: UInt32(IN_CREATE), name: "event5") == .node(.added, sysName: "event5")
        )
        #expect(
            DeviceDirectoryWatch.nodeChange(mask: UInt32(IN_MOVED_TO), name: "event5")
                == .node(.added, sysName: "event5"))
        #expect(
            DeviceDirectoryWatch.nodeChange(mask: UInt32(IN_DELETE), name: "event5")
                == .node(.removed, sysName: "event5"))
        #expect(
            DeviceDirectoryWatch.nodeChange(mask: UInt32(IN_MOVED_FROM), name: "event5")
                == .node(.removed, sysName: "event5"))
        #expect(
            DeviceDirectoryWatch.nodeChange(mask: UInt32(IN_ATTRIB), name: "event5")
                == .node(.changed, sysName: "event5"))
        #expect(DeviceDirectoryWatch.nodeChange(mask: UInt32(IN_CREATE), name: "js0") == nil)
        #expect(DeviceDirectoryWatch.nodeChange(mask: UInt32(IN_CREATE), name: "by-id") == nil)
    }
}

/// A pad this machine does not have, at a sysfs path no node has.
private let padNotOnThisMachine: InputDevice = {
    let identity = InputDeviceIdentity(
        name: "Pad Not Here", bus: .virtual, vendor: 0x1234, product: 0x5678, version: 1, sysName: "event97",
        node: "/dev/input/event97", sysPath: "/sys/devices/virtual/input/input97/event97")
    return InputDevice(
        id: identity.stableID, identity: identity,
        capabilities: InputDeviceCapabilities(bits: CapabilityBits(), maxEffects: 16), access: .readWrite,
        isGamepad: true, gamepadEvidence: .judged, capabilitySource: .evdev, driver: nil)
}()

/// Serialized: the descriptor count must not see another test's monitor.
@Suite(.serialized) struct DeviceMonitorLifecycleTests {
    /// Only a hang reaches this bound.
    static let hangGuardSeconds = 30.0

    /// Works on any machine: with no devices, the inotify source watches /dev for /dev/input to appear.
    @Test func cancellingTheConsumerEndsTheSequence() async throws {
        let monitor = try DeviceMonitor(source: .inotify, logger: .init(label: "test"))
        #expect(monitor.source == .inotify)
        // The consumer says when its loop has returned, on a stream the hang guard below can stop waiting on.
        let (loopEnded, loopEnd) = AsyncStream.makeStream(of: Int.self)
        let consumer = Task {
            var count = 0
            for await _ in monitor { count += 1 }
            loopEnd.yield(count)
        }
        // The consumer is cancelled once its iteration has started (the monitor's thread runs), so that it is the
        // cancellation that ends a sequence already being waited on.
        while !monitor.descriptorsBeforeIteration.isEmpty { await Task.yield() }
        consumer.cancel()
        let ended = await withTaskGroup(of: Int?.self) { group in
            group.addTask { await loopEnded.first { _ in true } }
            group.addTask {
                try? await Task.sleep(for: .seconds(Self.hangGuardSeconds))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        // The count of events seen is no matter (a device may come or go meanwhile); that the loop returned is.
        #expect(ended != nil, "the for-await loop returned once its task was cancelled")
    }

    @Test func aMonitorNeverIteratedReleasesItsDescriptors() throws {
        var held: [(descriptor: Int32, target: String)] = []
        do {
            let monitor = try DeviceMonitor(source: .inotify, logger: .init(label: "test"))
            held = monitor.descriptorsBeforeIteration.map { ($0, linkTarget(of: $0)) }
            #expect(held.count == 3, "inotify plus both ends of the wake-up pipe")
            #expect(held.contains { $0.target == "anon_inode:inotify" })
        }
        // Released: each descriptor is closed (or already reused for something else).
        for (descriptor, target) in held {
            #expect(linkTarget(of: descriptor) != target, "descriptor \(descriptor) (\(target)) still open")
        }
    }

    @Test func droppingTheIteratorStopsTheThreadAndClosesDescriptors() async throws {
        let monitor = try DeviceMonitor(source: .inotify, logger: .init(label: "test"))
        let held = monitor.descriptorsBeforeIteration.map { ($0, linkTarget(of: $0)) }
        do {
            // Iteration starts (the thread runs) and ends without a cancellation: the iterator goes away.
            let iterator = monitor.makeAsyncIterator()
            _ = iterator
        }
        // The thread closes the descriptors once woken; the bound only guards against a hang.
        let hangGuard = ContinuousClock.now + .seconds(30)
        while held.contains(where: { linkTarget(of: $0.0) == $0.1 }) && ContinuousClock.now < hangGuard {
            try await Task.sleep(for: .milliseconds(10))
        }
        for (descriptor, target) in held {
            #expect(linkTarget(of: descriptor) != target, "descriptor \(descriptor) (\(target)) still open")
        }
        _ = monitor  // the monitor itself stays alive: the iterator's end alone must stop the thread
    }

    /// A snapshot the caller took is the monitor's list of present devices as it was given: a pad that is not on
    /// this machine stays in it, so nothing was probed again in its place.
    @Test func aSnapshotGivenIsTakenAsThePresentDevicesWithoutProbingAgain() throws {
        let given = try DeviceMonitor(source: .inotify, snapshot: [padNotOnThisMachine], logger: .init(label: "test"))
        #expect(given.initialDevices.map(\.identity.node) == ["/dev/input/event97"])
        let probed = try DeviceMonitor(source: .inotify, logger: .init(label: "test"))
        #expect(!probed.initialDevices.contains { $0.identity.node == "/dev/input/event97" })
    }

    /// What `/proc/self/fd/N` points to (`anon_inode:inotify`, `pipe:[1234]`), or "" when N is not open.
    private func linkTarget(of descriptor: Int32) -> String {
        var target = [CChar](repeating: 0, count: Int(PATH_MAX))
        let length = readlink("/proc/self/fd/\(descriptor)", &target, target.count - 1)
        guard length > 0 else { return "" }
        return String(decoding: target[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// The netlink sources when the kernel dropped events because the socket's buffer was full: its next receive fails
/// with ENOBUFS, made here with a fault on libudev's receive.
@Suite struct DeviceMonitorLostEventTests {
    /// A kernel-source monitor that knows this machine's nodes and the pad that is not here, as if the pad's
    /// removal had not been heard.
    private func monitorMissingARemoval() throws -> MonitorWorker {
        let present = try DeviceDiscovery(logger: .init(label: "test")).devices(probing: .noNode)
        return try MonitorWorker(
            source: .kernel, snapshot: present + [padNotOnThisMachine], probing: .noNode, logger: .init(label: "test"))
    }

    /// The kernel tells an overflow once (the receive that tells it clears it); a fault that tells it on every receive
    /// must not keep the monitor's thread receiving forever.
    @Test(arguments: [(SyscallFaults.Calls.nth(1), 1), (.from(1), 2)])
    func aReceiveFailingWithENOBUFSReportsTheRemovalOfAKnownNodeSysfsNoLongerLists(
        calls: SyscallFaults.Calls, injected: Int
    )
        throws
    {
        let worker = try monitorMissingARemoval()
        defer { worker.close() }
        let (events, tally) = try SyscallFaults.withPlan(
            .init(site: "udev_monitor_receive_device", errno: .noBufferSpace, calls: calls), onThisThreadOnly: true
        ) { worker.drain() }
        #expect(tally.injected == injected)
        #expect(events == [DeviceEvent(kind: .removed, device: padNotOnThisMachine)])
    }

    /// An overflow told again at once (a burst that filled the socket again while libudev read on) ends the drain
    /// before the queue is empty, while the kernel may still drop events without a word: the monitor compares with
    /// sysfs then, and once more at the first drain after it that empties the queue, not at one that fails again.
    /// Until 7 December it compared only then, and what the kernel dropped after that comparison went unheard.
    @Test func aDrainAFailureEndedAfterAnOverflowIsComparedAgainOnceTheQueueIsEmpty() throws {
        let worker = try monitorMissingARemoval()
        defer { worker.close() }
        func drained(failing errno: Errno?) throws -> (events: [DeviceEvent], comparisons: Int) {
            let plan = errno.map { SyscallFaults.Plan(site: "udev_monitor_receive_device", errno: $0, calls: .from(1)) }
            let (events, tally) = try SyscallFaults.withPlan(plan, onThisThreadOnly: true) { worker.drain() }
            return (events, tally.calls["udev_enumerate_scan_devices", default: 0])
        }
        let overflowTwice = try drained(failing: .noBufferSpace)
        #expect(overflowTwice.events == [DeviceEvent(kind: .removed, device: padNotOnThisMachine)])
        #expect(overflowTwice.comparisons == 1)
        #expect(try drained(failing: .ioError).comparisons == 0, "a drain that fails again")
        #expect(try drained(failing: nil).comparisons == 1, "the drain that empties the queue")
        #expect(try drained(failing: nil).comparisons == 0, "a drain after that")
    }

    /// A comparison made by a drain that a failure ended before the queue was empty is owed again, and retried a
    /// second later, however long the wait had grown with the listings that failed before it (up to a minute): the
    /// comparison made starts the retries again. Without that, three failed listings left the retry 16 s away.
    @Test func aComparisonMadeAndOwedAgainIsRetriedASecondLaterWhateverFailedBeforeIt() throws {
        let present = try DeviceDiscovery(logger: .init(label: "test")).devices(probing: .noNode)
        let worker = try MonitorWorker(source: .kernel, snapshot: present, probing: .noNode, logger: .init(label: "t"))
        defer { worker.close() }
        let overflowTwice = SyscallFaults.Plan(
            site: "udev_monitor_receive_device", errno: .noBufferSpace, calls: .from(1))
        _ = try SyscallFaults.withPlan(overflowTwice, onThisThreadOnly: true) { worker.drain() }
        for _ in 0..<3 {
            _ = try SyscallFaults.withPlan(
                .init(site: "udev_enumerate_scan_devices", errno: .noMemory, calls: .from(1)), onThisThreadOnly: true
            ) { worker.drain() }
        }
        let (_, tally) = try SyscallFaults.withPlan(overflowTwice, onThisThreadOnly: true) { worker.drain() }
        #expect(tally.calls["udev_enumerate_scan_devices", default: 0] == 1, "the comparison made")
        let deadline = try #require(worker.comparisonRetry.deadline, "a comparison owed again")
        let wait = deadline - min(deadline, Sys.monotonicNanoseconds())
        #expect(wait <= ComparisonRetry.first, "the retry \(Double(wait) / 1e9) s away")
    }

    /// A listing of sysfs that keeps failing is logged at info once, its failures after that at debug (the comparison
    /// is retried every few seconds, up to every minute, as long as it fails), and the listing that works again at
    /// info. Until 7 December each retry logged two lines at info.
    @Test func aListingOfSysfsThatKeepsFailingIsLoggedAtInfoOnceAndAgainWhenItWorks() throws {
        let log = RecordingLog()
        let present = try DeviceDiscovery(logger: .init(label: "test")).devices(probing: .noNode)
        let worker = try MonitorWorker(source: .kernel, snapshot: present, probing: .noNode, logger: log.logger)
        defer { worker.close() }
        // An overflow told again at once leaves a comparison owed at every drain that empties the queue.
        _ = try SyscallFaults.withPlan(
            .init(site: "udev_monitor_receive_device", errno: .noBufferSpace, calls: .from(1)), onThisThreadOnly: true
        ) { worker.drain() }
        log.removeAll()
        for _ in 0..<3 {
            _ = try SyscallFaults.withPlan(
                .init(site: "udev_enumerate_scan_devices", errno: .noMemory, calls: .from(1)), onThisThreadOnly: true
            ) { worker.drain() }
        }
        _ = try SyscallFaults.withPlan(nil) { worker.drain() }
        let logged = log.entries.filter { $0.level >= .info }.map {
            String($0.message.prefix { $0 != ":" }).trimmingCharacters(in: .whitespaces)
        }
        #expect(
            logged == [
                "comparing with sysfs again, as owed since an earlier drain",
                "listing input devices after lost events failed", "listing input devices works again failures=3",
            ])
        #expect(log.entries.filter { $0.level == .debug && $0.message.hasPrefix("listing input devices") }.count == 2)
    }

    /// The comparison with sysfs is for lost events alone: a receive that finds nothing waiting tells nothing. (Its
    /// drain holds the process's fault plan, none, so that a test beside it that injects a fault does not inject it
    /// here.)
    @Test func aReceiveThatFindsNothingWaitingReportsNoChangeOfTheKnownNodes() throws {
        let worker = try monitorMissingARemoval()
        defer { worker.close() }
        #expect(try SyscallFaults.withPlan(nil) { worker.drain() }.result == [])
    }

    /// The driver-bind watch reads on past an overflow, but a fault that tells one on every receive ends its drain
    /// at the second, as the kernel never tells two in a row. The drain runs on a thread of its own for at most 10 s
    /// (a drain that spun would be let go when the fault is disarmed, and fail the test rather than hang it).
    @Test func theBindWatchStopsDrainingWhenEveryReceiveTellsAnOverflow() throws {
        final class Watch: @unchecked Sendable {
            let watch: DriverBindWatch
            let done = DeadlineWaiter()
            let finished = Lock(false)
            init() throws { watch = try DriverBindWatch() }
        }
        let watch = try Watch()
        let (ended, tally) = try SyscallFaults.withPlan(
            .init(site: "udev_monitor_receive_device", errno: .noBufferSpace, calls: .from(1))
        ) { () -> Bool in
            Thread.detachNewThread {
                watch.watch.drain()
                watch.finished.withLock { $0 = true }
                watch.done.signal()
            }
            let deadline = MonotonicTime.deadline(afterSeconds: 10)
            while !watch.finished.withLock({ $0 }), MonotonicTime.nanoseconds() < deadline {
                watch.done.wait(untilNanoseconds: deadline)
            }
            return watch.finished.withLock { $0 }
        }
        #expect(ended, "the drain still received after 10 s")
        // Two for this drain; a monitor another test runs meanwhile may receive too.
        #expect(tally.injected >= 2)
    }
}

@Suite struct EventDeviceErrorTests {
    @Test func errnoSortsIntoWhatTheCallerDoes() {
        #expect(EventDeviceError.kind(for: .noDevice) == .deviceGone)
        #expect(EventDeviceError.kind(for: .noSpace) == .noEffectSlot)
        #expect(EventDeviceError.kind(for: .permissionDenied) == .permissionDenied)
        #expect(EventDeviceError.kind(for: .notPermitted) == .permissionDenied)
        #expect(EventDeviceError.kind(for: .notImplemented) == .noForceFeedback)
        #expect(EventDeviceError.kind(for: .invalidArgument) == .invalidRequest)
        #expect(EventDeviceError.kind(for: .ioError) == .other)
    }

    /// A file or a folder named where an event node goes is said to be no event node, not "system error"; nor is a
    /// character device that refuses evdev's requests with EINVAL (as a hidraw node or a joystick's `jsN` does: here
    /// /dev/urandom) said to be an invalid request of ours.
    @Test(arguments: ["/dev/null", "/tmp", "/dev/urandom"])
    func openingAFileThatIsNoEventNodeSaysSo(path: String) {
        do {
            _ = try EventDevice(node: path, logger: .init(label: "test"))
            Issue.record("\(path) opened as an event node")
        } catch {
            #expect(error.description.contains("failed: not an input event node"), "\(error)")
        }
    }

    @Test func openingAMissingNodeSaysWhat() {
        #expect(throws: EventDeviceError.self) {
            try EventDevice(node: "/nonexistent/event0", logger: .init(label: "test"))
        }
        do {
            _ = try EventDevice(node: "/nonexistent/event0", logger: .init(label: "test"))
        } catch {
            #expect(error.kind == .notFound)
            #expect(error.description.contains("/nonexistent/event0"))
        }
    }
}

@Suite struct DeviceAccessTests {
    @Test func nodeLinksResolveToTheirTarget() throws {
        let link = "/tmp/haptics-test-link-\(getpid())"
        try #require(symlink("/dev/null", link) == 0)
        defer { unlink(link) }
        #expect(DeviceDiscovery.resolvedNode(link) == "/dev/null")
        #expect(DeviceDiscovery.resolvedNode("/nonexistent/event9") == "/nonexistent/event9")
    }

    @Test func missingNodeIsDeniedButNotForPermission() throws {
        guard case .failure(let failure) = ProbeHandle.open("/nonexistent/event0") else {
            Issue.record("opening a missing node succeeded")
            return
        }
        #expect(failure.access.name == "denied")
        #expect(!failure.access.isPermissionProblem)
        #expect(failure.access.reason?.contains("No such file") == true)
    }

    /// Without opening: a file this process may write is read-write; a missing node is denied, and not for want
    /// of permission.
    @Test func accessWithoutOpeningSaysWhatThisProcessMayOpenANodeFor() throws {
        let path = "/tmp/haptics-test-access-\(getpid())"
        let fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0o600)
        try #require(fd >= 0)
        close(fd)
        defer { unlink(path) }
        #expect(DeviceAccess.permitted(for: path) == .readWrite)
        let missing = DeviceAccess.permitted(for: "/nonexistent/event0")
        #expect(missing.name == "denied")
        #expect(!missing.isPermissionProblem)
        #expect(missing.reason?.contains("does not exist") == true)
    }

    /// The monitor tells a node's access changed when it went to another state, not when the words of its reason
    /// differ: an engine's snapshot, listed without opening a node, words them as `access(2)` does, and the monitor's
    /// probe as its open does. Comparing the reasons too, a read-only or denied pad was told changed, with the access
    /// it had, at the first attribute change of its node or comparison with sysfs.
    @Test func accessWordedDifferentlyIsNoChangeButAnotherStateIs() {
        let listedReadOnly = DeviceAccess.readOnly(reason: "write not permitted (access(2))")
        let probedReadOnly = DeviceAccess.readOnly(reason: "write refused: open: Permission denied (EACCES)")
        let listedDenied = DeviceAccess.denied(reason: DeviceAccess.permissionMarker + "read not permitted (access(2))")
        let probedDenied = DeviceAccess.denied(
            reason: DeviceAccess.permissionMarker + "open: Permission denied (EACCES)")
        let missing = DeviceAccess.permitted(for: "/nonexistent/event0")
        #expect(!MonitorWorker.isAccessChange(from: listedReadOnly, to: probedReadOnly))
        #expect(!MonitorWorker.isAccessChange(from: listedDenied, to: probedDenied))
        #expect(MonitorWorker.isAccessChange(from: listedReadOnly, to: .readWrite))
        #expect(MonitorWorker.isAccessChange(from: .readWrite, to: probedReadOnly))
        #expect(MonitorWorker.isAccessChange(from: probedReadOnly, to: listedDenied))
        #expect(MonitorWorker.isAccessChange(from: missing, to: probedDenied), "a node made, its access denied")
        #expect(!MonitorWorker.isAccessChange(from: .readWrite, to: missing), "a node gone is its removal")
    }

    /// sysfs refuses write opens of read-only attributes with EACCES even for root, which exercises the
    /// read-only fallback without a device. (A read-only sysfs mount answers EROFS instead: no test then.)
    static let readOnlyAttribute = "/sys/kernel/uevent_seqnum"

    static var writeIsRefusedWithEACCES: Bool {
        let fd = open(readOnlyAttribute, O_RDWR | O_CLOEXEC)
        if fd >= 0 { close(fd) }
        return fd < 0 && errno == EACCES
    }

    @Test(.enabled(if: writeIsRefusedWithEACCES))
    func writeRefusalFallsBackToReadOnly() throws {
        guard case .success(let handle) = ProbeHandle.open(Self.readOnlyAttribute) else {
            Issue.record("read-only open failed")
            return
        }
        #expect(handle.access.name == "read-only")
        #expect(handle.access.isPermissionProblem)
        #expect(handle.access.reason?.contains("Permission denied") == true)
    }
}

@Suite struct MonitorSourceChoiceTests {
    /// The automatic source: udev where its daemon runs, inotify in a container (kernel uevents reach only the
    /// initial network namespace), the kernel's uevents elsewhere. systemd-nspawn's and an LXC container's
    /// systemd mark theirs with /run/systemd/container, which was not looked for: the monitor listened to kernel
    /// uevents there and heard no pad come or go.
    @Test(arguments: [
        ([String](), DeviceMonitor.Source.kernel),
        (["/run/udev/control", "/.dockerenv"], .udev),
        (["/.dockerenv"], .inotify),
        (["/run/.containerenv"], .inotify),
        (["/.flatpak-info"], .inotify),
        (["/run/systemd/container"], .inotify),
    ])
    func theAutomaticSourceFollowsTheFilesPresent(files: [String], source: DeviceMonitor.Source) {
        #expect(DeviceMonitor.Source.chosen(exists: files.contains) == source)
    }
}
