// A thin owner of libudev's handles: one `checkError` for its "negative errno" results, and `unref` in
// `deinit` so no path leaks a reference. Internal: no libudev type leaves this module.
internal import CLibudev
internal import Glibc
@_spi(Internals) import LinuxSystem

/// Where a udev daemon, when one runs, has its control socket; its absence means nobody processes
/// uevents, so the "udev" monitor source would hear nothing and no `ID_INPUT_*` properties exist.
let udevDaemonControlPath = "/run/udev/control"

/// Whether a udev daemon (systemd-udevd, eudev) is running on this system.
var udevDaemonIsRunning: Bool { Sys.exists(udevDaemonControlPath) }

// Every libudev call that can fail goes through one of these four, which is also where tests make it fail
// (`SyscallFaults`). As with system calls, an interrupted call is made again.

/// A call whose result is 0 or a negative errno.
private func checkError(_ call: @autoclosure () -> String, _ body: () -> Int32) throws(SystemCallError) {
    while true {
        let result = SyscallFaults.injected(at: call).map { -$0.rawValue } ?? body()
        if result == -Errno.interrupted.rawValue { continue }
        if result < 0 { throw SystemCallError(Errno(rawValue: -result), call: call()) }
        return
    }
}

/// A call that returns a new handle, or NULL when it cannot allocate one.
private func allocated(_ call: @autoclosure () -> String, _ body: () -> OpaquePointer?) throws(SystemCallError)
    -> OpaquePointer
{
    while let injected = SyscallFaults.injected(at: call) {
        if injected != .interrupted { throw SystemCallError(injected, call: call()) }
    }
    guard let pointer = body() else { throw SystemCallError(.noMemory, call: call()) }
    return pointer
}

/// A lookup whose NULL means "none" (no such device, nothing waiting): a failure reads as none.
private func lookup(_ call: @autoclosure () -> String, _ body: () -> OpaquePointer?) -> OpaquePointer? {
    while let injected = SyscallFaults.injected(at: call) {
        if injected != .interrupted { return nil }
    }
    return body()
}

/// A call whose NULL is told apart by its errno (a receive's `EAGAIN`: nothing waits): the handle, or why not.
private func received(_ call: @autoclosure () -> String, _ body: () -> OpaquePointer?) -> (
    handle: OpaquePointer?, errno: Errno
) {
    while true {
        if let injected = SyscallFaults.injected(at: call) {
            if injected == .interrupted { continue }
            return (nil, injected)
        }
        errno = 0
        let handle = body()
        let failure = Errno(rawValue: errno)
        if handle == nil && failure == .interrupted { continue }
        return (handle, failure)
    }
}

/// The library context (`struct udev`).
final class UdevContext: @unchecked Sendable {
    // `@unchecked`: libudev contexts are not thread-safe; each owner (a discovery call, a monitor thread)
    // makes its own and never shares it across threads.
    let pointer: OpaquePointer

    init() throws(SystemCallError) {
        pointer = try allocated("udev_new") { udev_new() }
    }

    deinit { udev_unref(pointer) }

    /// The sysfs paths of every device of `subsystem` (`udev_enumerate_scan_devices`), read from sysfs,
    /// so this works without a udev daemon.
    func syspaths(subsystem: String) throws(SystemCallError) -> [String] {
        let enumerate = try allocated("udev_enumerate_new") { udev_enumerate_new(pointer) }
        defer { udev_enumerate_unref(enumerate) }
        try checkError("udev_enumerate_add_match_subsystem") {
            udev_enumerate_add_match_subsystem(enumerate, subsystem)
        }
        try checkError("udev_enumerate_scan_devices") { udev_enumerate_scan_devices(enumerate) }
        var paths: [String] = []
        var entry = udev_enumerate_get_list_entry(enumerate)
        while let current = entry {
            if let name = udev_list_entry_get_name(current) { paths.append(String(cString: name)) }
            entry = udev_list_entry_get_next(current)
        }
        return paths
    }

    func device(syspath: String) -> UdevDevice? {
        lookup("udev_device_new_from_syspath") { udev_device_new_from_syspath(pointer, syspath) }
            .map { UdevDevice(owning: $0) }
    }

    func device(subsystem: String, sysName: String) -> UdevDevice? {
        lookup("udev_device_new_from_subsystem_sysname") {
            udev_device_new_from_subsystem_sysname(pointer, subsystem, sysName)
        }
        .map { UdevDevice(owning: $0) }
    }
}

/// One device (`struct udev_device`), holding a reference.
final class UdevDevice {
    let pointer: OpaquePointer

    /// Takes over a reference the caller owns.
    init(owning pointer: OpaquePointer) { self.pointer = pointer }

    deinit { udev_device_unref(pointer) }

    var syspath: String { string(udev_device_get_syspath(pointer)) ?? "" }
    var sysName: String { string(udev_device_get_sysname(pointer)) ?? "" }
    var node: String? { string(udev_device_get_devnode(pointer)) }
    var driver: String? { string(udev_device_get_driver(pointer)) }
    var subsystem: String? { string(udev_device_get_subsystem(pointer)) }
    /// `add`, `remove`, `change`... for a device received from a monitor; nil for an enumerated one.
    var action: String? { string(udev_device_get_action(pointer)) }
    /// The udev daemon has processed this device: its database properties (`ID_INPUT_*`) exist.
    var isInitialized: Bool { udev_device_get_is_initialized(pointer) > 0 }
    /// sysfs has the device's `driver` link (made before the driver's probe is called, so not a sign that
    /// it returned).
    var hasDriverLink: Bool { Sys.exists(syspath + "/driver") }

    func property(_ key: String) -> String? { string(udev_device_get_property_value(pointer, key)) }

    func attribute(_ name: String) -> String? {
        string(udev_device_get_sysattr_value(pointer, name)).map { $0.trimmingSurroundingWhitespace() }
    }

    /// The closest ancestor in `subsystem` (the `inputN` device above an `eventN` node). The parent is
    /// owned by the child, so it takes its own reference to outlive it safely.
    func parent(subsystem: String) -> UdevDevice? {
        udev_device_get_parent_with_subsystem_devtype(pointer, subsystem, nil).flatMap { parent in
            udev_device_ref(parent).map { UdevDevice(owning: $0) }
        }
    }

    /// The direct parent in sysfs, with its own reference.
    var parent: UdevDevice? {
        udev_device_get_parent(pointer).flatMap { parent in udev_device_ref(parent).map { UdevDevice(owning: $0) } }
    }

    private func string(_ pointer: UnsafePointer<CChar>?) -> String? { pointer.map { String(cString: $0) } }
}

/// A netlink listener for device events (`struct udev_monitor`).
final class UdevMonitor {
    /// Which netlink group to listen to.
    enum Group: String {
        /// Events a udev daemon re-broadcasts after applying its rules (permissions, `ID_INPUT_*`).
        case udev
        /// The kernel's raw uevents: they arrive even when no udev daemon runs.
        case kernel
    }

    let pointer: OpaquePointer
    let context: UdevContext
    /// Whether the last receive told an overflow (`receive`).
    private var lastToldOverflow = false

    /// Listens to `group` for the events of devices in any of `subsystems`.
    init(context: UdevContext, group: Group, subsystems: [String]) throws(SystemCallError) {
        let pointer = try allocated("udev_monitor_new_from_netlink(\(group))") {
            udev_monitor_new_from_netlink(context.pointer, group.rawValue)
        }
        self.pointer = pointer
        self.context = context
        for subsystem in subsystems {
            try checkError("udev_monitor_filter_add_match_subsystem_devtype") {
                udev_monitor_filter_add_match_subsystem_devtype(pointer, subsystem, nil)
            }
        }
        try checkError("udev_monitor_enable_receiving") { udev_monitor_enable_receiving(pointer) }
    }

    deinit { udev_monitor_unref(pointer) }

    /// The socket to poll; readable when a device event is waiting.
    var fileDescriptor: Int32 { udev_monitor_get_fd(pointer) }

    /// The receive buffer a monitor asks for: room for thousands of events (the udev daemon's message for a device
    /// with its properties takes one to three KiB of it), where the kernel's default of 208 KiB fills with the burst
    /// of a hub's devices appearing at once, or of every device coming back after a resume, while the reader probes
    /// the first ones.
    static let burstBufferBytes: Int32 = 8 << 20

    /// Asks for a receive buffer of `bytes` (`udev_monitor_set_receive_buffer_size`: `SO_RCVBUF`, which the kernel
    /// caps at `net.core.rmem_max`, then `SO_RCVBUFFORCE`, which needs `CAP_NET_ADMIN`). The kernel charges the
    /// buffer only for the events waiting in it, so a large one costs nothing while the reader keeps up.
    func setReceiveBufferSize(_ bytes: Int32) throws(SystemCallError) {
        try checkError("udev_monitor_set_receive_buffer_size") { udev_monitor_set_receive_buffer_size(pointer, bytes) }
    }

    /// Whether a message waits on the socket now (a `poll` that does not wait).
    var hasWaitingMessage: Bool {
        var fds = [pollfd(fd: fileDescriptor, events: Int16(POLLIN), revents: 0)]
        return ((try? Sys.poll(&fds, timeout: 0)) ?? 0) > 0 && fds[0].revents & Int16(POLLIN) != 0
    }

    /// What one receive found.
    enum Reception {
        case device(UdevDevice)
        /// Nothing is waiting (the socket is non-blocking), or what waited was a message libudev drops (not from
        /// the kernel or the udev daemon, or of a subsystem the filter refuses).
        case nothing
        /// `ENOBUFS`: the socket's receive buffer was full when an event came, and the kernel dropped it (and any
        /// more until there was room). The events still waiting are whole and in order; the dropped ones are lost.
        case overflowed
        /// Another errno: a message that could not be read or parsed, which is gone from the socket.
        case failed(Errno)
    }

    /// The next waiting device event. The kernel tells an overflow once (the receive that tells it clears it): an
    /// `ENOBUFS` right after one is a failure, which ends a caller's reading. It is a fault injected on every call,
    /// or a second overflow: libudev reads past the messages it drops within one receive, and a burst that fills the
    /// socket again after it emptied it is told at its next read. (The monitor then compares with sysfs once more
    /// when the queue is empty: `MonitorWorker.comparisonOwed`.)
    func receive() -> Reception {
        let result = received("udev_monitor_receive_device") { udev_monitor_receive_device(pointer) }
        let reception: Reception
        if let handle = result.handle {
            reception = .device(UdevDevice(owning: handle))
        } else {
            switch result.errno {
            case .wouldBlock: reception = .nothing
            case .noBufferSpace where !lastToldOverflow: reception = .overflowed
            default: reception = .failed(result.errno)
            }
        }
        if case .overflowed = reception { lastToldOverflow = true } else { lastToldOverflow = false }
        return reception
    }
}
