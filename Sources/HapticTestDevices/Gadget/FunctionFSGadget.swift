// A USB device made of a configfs gadget with one FunctionFS function, bound to the dummy host controller
// (dummy_hcd), so that the kernel enumerates it as a real USB device and its real driver binds it. The
// function's control endpoint (ep0) and interrupt OUT endpoint are served by two threads; every packet the
// driver sends is decoded and recorded. Unbinding from the controller is a cable pulled out; binding again is
// the same pad plugged back in.
internal import Glibc
import LinuxInput
package import Logging
import Synchronization
@_spi(Internals) import LinuxSystem

/// A USB function (an Xbox 360 pad, a HID controller) as a gadget: created and bound on init, removed by
/// `destroy()` (or deinit).
package final class FunctionFSGadget: EmulatedDevice {
    private let server: GadgetServer
    private let threads: ServingThreads
    private let driver: String
    private let logger: Logger
    /// Opened before each plug, so the driver's `bind` is heard; taken by the wait that follows it.
    private let binds: Lock<DriverBindWatch?>

    package init(
        _ function: any USBGadgetFunction, driver: String, recordPath: String? = nil, keepsRecords: Bool = true,
        logger: Logger
    ) throws(EmulationError) {
        self.driver = driver
        self.logger = logger
        binds = Lock(nil)
        let log: DeviceRecordLog
        do { log = try DeviceRecordLog(path: recordPath, keepsRecords: keepsRecords, logger: logger) } catch {
            throw .recordFileFailed(error)
        }
        let paths = try GadgetPaths.make()
        let server = GadgetServer(function: function, paths: paths, log: log, logger: logger)
        do {
            try server.build()
        } catch {
            server.tearDown()
            throw error
        }
        self.server = server
        let threads: ServingThreads
        do {
            threads = try ServingThreads([{ server.serveControl() }, { server.serveOut() }], stop: server.stop)
        } catch {
            server.tearDown()
            throw .failed("starting the gadget's threads", error)
        }
        binds.withLock { $0 = SysfsInputNodes.openBindWatch(logger: logger) }
        do {
            try server.bind()
        } catch {
            threads.stopAndJoin(server.stop)
            server.tearDown()
            throw .failed("binding the gadget", error)
        }
        self.threads = threads
        logger.info("USB gadget created", metadata: ["gadget": "\(paths.gadget)", "udc": "\(paths.controller)"])
    }

    deinit { destroy() }

    package func records() -> [PadRecord] { server.log.records() }
    package func recordStream() -> AsyncStream<PadRecord> { server.log.subscribe() }
    package func inputReports() -> [StreamedInputReport] { server.log.inputReports() }
    package var motors: EmulatedMotorOutput { server.motors.withLock { $0 } }

    package func waitUntilBound(timeout: Double) throws(EmulationError) -> EmulatedDeviceNodes {
        let server = server
        let watch = binds.withLock { $0.take() }
        return try SysfsInputNodes.wait(
            model: server.identity.product, driver: driver, timeout: timeout, binds: watch, logger: logger
        ) {
            guard let path = server.hostInterface() else { return (nil, "not enumerated") }
            return (SysfsInputNodes.bound(at: path, orHIDDeviceBelow: true), "USB interface \(path)")
        }
    }

    /// Detaches the pad from the host controller, and returns once the host has let go of it (its USB device
    /// is gone from sysfs): a pad plugged in next is never mistaken for this one.
    package func unplug() throws(EmulationError) {
        // A plug nobody waited for leaves its watch: unplugged, it has nothing to hear.
        binds.withLock { $0 = nil }
        do { try server.unbind() } catch { throw .failed("unbinding the gadget", error) }
        server.waitUntilDetached()
    }

    /// Attaches it again: the host enumerates the same pad anew.
    package func replug() throws(EmulationError) {
        binds.withLock { $0 = SysfsInputNodes.openBindWatch(logger: logger) }
        do { try server.bind() } catch { throw .failed("binding the gadget", error) }
    }

    package func destroy() {
        binds.withLock { $0 = nil }
        guard threads.stopAndJoin(server.stop) else { return }
        server.waitUntilDetached()
        server.tearDown()
    }
}

/// Where one gadget lives: its configfs directory, FunctionFS instance and mount, and the controller.
struct GadgetPaths: Sendable {
    static let configfs = "/sys/kernel/config"
    static let gadgets = configfs + "/usb_gadget"
    static let controllers = "/sys/class/udc"
    private static let counter = Lock(0)

    var gadget: String
    var function: String
    var mountPoint: String
    var controller: String

    /// Names unique to this process and call; mounts configfs when it is not yet.
    static func make() throws(EmulationError) -> GadgetPaths {
        if !Sys.exists(gadgets), Sys.exists(configfs) {
            try? Sys.mount(source: "none", target: configfs, type: "configfs")
        }
        guard Sys.exists(gadgets) else {
            throw .transportMissing(
                "The USB gadget stack (\(gadgets))", load: "modprobe libcomposite usb_f_fs",
                SystemCallError(.noSuchFileOrDirectory, call: "stat(\(gadgets))"))
        }
        guard let controller = ((try? Sys.directoryEntries(controllers)) ?? []).sorted().first else {
            throw .transportMissing(
                "A USB device controller (\(controllers))", load: "modprobe dummy_hcd",
                SystemCallError(.noDevice, call: "readdir(\(controllers))"))
        }
        let number = counter.withLock { value -> Int in
            value += 1
            return value
        }
        let instance = "haptics\(Sys.processID)x\(number)"
        return GadgetPaths(
            gadget: gadgets + "/" + instance, function: instance, mountPoint: "/dev/ffs-" + instance,
            controller: controller)
    }
}

private final class GadgetServer: @unchecked Sendable {
    let function: Lock<any USBGadgetFunction>
    let identity: USBGadgetIdentity
    let paths: GadgetPaths
    let log: DeviceRecordLog
    let logger: Logger
    let motors = Lock(EmulatedMotorOutput.off)
    /// Set once, before the threads start; read-only afterwards.
    private(set) var control: Int32 = -1
    private(set) var out: Int32 = -1
    private let wake: (read: Int32, write: Int32)?
    private let stopping = Atomic(false)
    private let enabled = DeadlineWaiter()

    init(function: any USBGadgetFunction, paths: GadgetPaths, log: DeviceRecordLog, logger: Logger) {
        self.function = Lock(function)
        identity = function.identity
        self.paths = paths
        self.log = log
        self.logger = logger
        wake = try? Sys.pipe()
    }

    // MARK: Building and removing

    /// configfs directories and attributes, the function's link, the FunctionFS mount, then the descriptor
    /// and strings blocks on ep0 (after which the endpoint files exist).
    func build() throws(EmulationError) {
        guard wake != nil else { throw .failed("pipe2", SystemCallError(.tooManyOpenFiles, call: "pipe2")) }
        try step("mkdir \(paths.gadget)", Sys.makeDirectory(paths.gadget))
        for directory in USBGadgetIdentity.configfsDirectories(function: paths.function) {
            try step("mkdir \(directory)", Sys.makeDirectory(paths.gadget + "/" + directory))
        }
        // An empty string (a pad without a serial number) is left unset, so the device has none.
        for attribute in identity.configfsAttributes where !attribute.value.isEmpty {
            try step("write \(attribute.path)", Sys.writeFile(paths.gadget + "/" + attribute.path, attribute.value))
        }
        let link = USBGadgetIdentity.configfsFunctionLink(function: paths.function)
        try step(
            "link the function", Sys.symbolicLink(paths.gadget + "/" + link.target, at: paths.gadget + "/" + link.link))
        try step("mkdir \(paths.mountPoint)", Sys.makeDirectory(paths.mountPoint))
        try step("mount functionfs", Sys.mount(source: paths.function, target: paths.mountPoint, type: "functionfs"))
        control = try step("open ep0", Sys.open(paths.mountPoint + "/ep0", flags: O_RDWR))
        let (descriptors, strings) = function.withLock { ($0.descriptorBlock, $0.stringsBlock) }
        try step("write the descriptors", writeAll(control, descriptors))
        try step("write the strings", writeAll(control, strings))
        // Non-blocking: a read while the host has not enabled the endpoint fails with EAGAIN instead of
        // waiting for it (which nothing but a signal could interrupt).
        out = try step("open ep2", Sys.open(paths.mountPoint + "/ep2", flags: O_RDWR | O_NONBLOCK))
    }

    @discardableResult
    private func step<T>(_ what: String, _ body: @autoclosure () throws(SystemCallError) -> T) throws(EmulationError)
        -> T
    {
        do { return try body() } catch { throw .failed(what, error) }
    }

    private func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(SystemCallError) {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(SystemCallError) in try Sys.write(fd, buffer) }
        }
        _ = try result.get()
    }

    func bind() throws(SystemCallError) { try Sys.writeFile(paths.gadget + "/UDC", paths.controller) }
    func unbind() throws(SystemCallError) { try Sys.writeFile(paths.gadget + "/UDC", "\n") }

    /// Stops both threads: the control thread through the wake pipe; the OUT thread through the unbind,
    /// which fails its pending read with ESHUTDOWN, and the flag it checks before every read.
    func stop() {
        stopping.store(true, ordering: .sequentiallyConsistent)
        enabled.signal()
        try? unbind()
        if let wake { _ = [UInt8(1)].withUnsafeBytes { try? Sys.write(wake.write, $0) } }
    }

    /// Undoes `build` in reverse, skipping what was never made.
    func tearDown() {
        for fd in [out, control] where fd >= 0 { Sys.close(fd) }
        if let wake {
            Sys.close(wake.read)
            Sys.close(wake.write)
        }
        try? Sys.unmount(paths.mountPoint)
        try? Sys.removeDirectory(paths.mountPoint)
        for (index, path) in USBGadgetIdentity.configfsRemovalOrder(function: paths.function).enumerated() {
            if index == 0 {
                try? Sys.unlink(paths.gadget + "/" + path)
            } else {
                try? Sys.removeDirectory(paths.gadget + "/" + path)
            }
        }
        try? Sys.removeDirectory(paths.gadget)
        log.finish()
        log.closeFile()
        logger.info("USB gadget removed", metadata: ["gadget": "\(paths.gadget)"])
    }

    // MARK: Serving

    /// ep0: bind/enable/disable events and control requests, until `stop()`.
    func serveControl() {
        guard let wake else { return }
        var buffer = [UInt8](repeating: 0, count: FunctionFS.eventSize * 4)
        while !stopping.load(ordering: .sequentiallyConsistent) {
            var fds = [
                pollfd(fd: control, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0),
            ]
            guard (try? Sys.poll(&fds, timeout: -1)) != nil, fds[1].revents == 0 else { return }
            let result = buffer.withUnsafeMutableBytes { bytes in
                Result { () throws(SystemCallError) in try Sys.read(control, into: bytes) }
            }
            guard case .success(let count) = result else { continue }
            for event in FunctionFS.parseEvents(Array(buffer.prefix(count))) { handle(event) }
        }
    }

    private func handle(_ event: FunctionFS.Event) {
        switch event.type {
        case .enable:
            enabled.signal()
        case .setup:
            if let request = event.setup { answer(request) }
        default:
            break
        }
    }

    /// Ends a control request: data or an acknowledgement, or a stall (a zero-length transfer against the
    /// request's direction, which the kernel fails with EL2HLT by design).
    private func answer(_ request: FunctionFS.ControlRequest) {
        var scratch = [UInt8](repeating: 0, count: Int(request.length))
        switch function.withLock({ $0.answer(request) }) {
        case .data(let bytes):
            try? writeAll(control, bytes)
        case .acknowledge:
            let count = scratch.withUnsafeMutableBytes { (try? Sys.read(control, into: $0)) ?? 0 }
            let data = Array(scratch.prefix(count))
            if count > 0 { record(data, function.withLock { $0.receive(request, data: data) }) }
        case .stall where request.isDeviceToHost:
            _ = scratch.withUnsafeMutableBytes {
                try? Sys.read(control, into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<0]))
            }
        case .stall:
            try? writeAll(control, [])
        }
    }

    /// The interrupt OUT endpoint: one packet per read while the host has it enabled.
    func serveOut() {
        var buffer = [UInt8](repeating: 0, count: Self.packetCapacity)
        while !stopping.load(ordering: .sequentiallyConsistent) {
            let result = buffer.withUnsafeMutableBytes { bytes in
                Result { () throws(SystemCallError) in try Sys.read(out, into: bytes) }
            }
            switch result {
            case .success(let count):
                receive(Array(buffer.prefix(count)))
            case .failure:
                // Not enabled yet (EAGAIN), or disabled under a pending read (ESHUTDOWN): wait for ENABLE, and
                // look again now and then in case an ENABLE came between the read and the wait.
                enabled.wait(untilNanoseconds: Sys.monotonicNanoseconds() + Self.enableRecheckNanoseconds)
            }
        }
    }

    static let packetCapacity = 64
    static let enableRecheckNanoseconds: UInt64 = 100_000_000

    private func receive(_ packet: [UInt8]) {
        record(packet, function.withLock { $0.receive(packet: packet) })
    }

    /// Records what the host sent, the motor levels after it (unchanged when it sets none) and what else it
    /// decoded to.
    private func record(_ bytes: [UInt8], _ response: HIDOutputResponse?) {
        let time = PadTimestamp(microseconds: Int64(Sys.monotonicNanoseconds() / 1000))
        let levels = motors.withLock { motors in
            if let decoded = response?.motors { motors = decoded }
            return motors
        }
        log.append(
            PadRecord(
                outputAt: time, report: bytes, strong: levels.strong, weak: levels.weak,
                strongFrequency: levels.strongFrequency, weakFrequency: levels.weakFrequency, mode: levels.mode,
                pid: response?.pid))
    }

    // MARK: The host's side

    /// How long the host may take to notice an unplug (it disconnects on a hub work item).
    static let detachTimeoutNanoseconds: UInt64 = 5_000_000_000

    /// Waits, looking every few milliseconds, until the host's USB device for the pad is gone.
    func waitUntilDetached() {
        let deadline = Sys.monotonicNanoseconds() + Self.detachTimeoutNanoseconds
        while hostInterface() != nil, Sys.monotonicNanoseconds() < deadline {
            Sys.sleep(nanoseconds: 5_000_000)
        }
    }

    /// The host's view of the pad: the first interface (`B-P:1.0`) of the USB device whose serial number and
    /// ids are ours, under /sys/bus/usb/devices.
    func hostInterface() -> String? {
        let root = "/sys/bus/usb/devices"
        for entry in ((try? Sys.directoryEntries(root)) ?? []).sorted() where !entry.contains(":") {
            let device = root + "/" + entry
            // Without a serial number of its own, the pad is told apart by being on the dummy host controller.
            let serial = identity.serialNumber.isEmpty ? nil : identity.serialNumber
            guard attribute(device, "idVendor") == hex(identity.vendorID, digits: 4),
                attribute(device, "idProduct") == hex(identity.productID, digits: 4),
                attribute(device, "serial") == serial,
                serial != nil || ((try? Sys.realPath(device)) ?? "").contains("/dummy_hcd.")
            else { continue }
            return device + "/" + entry + ":1.0"
        }
        return nil
    }

    private func attribute(_ directory: String, _ name: String) -> String? {
        (try? Sys.readSmallFile(directory + "/" + name))?.split(separator: "\n").first.map(String.init)
    }

}
