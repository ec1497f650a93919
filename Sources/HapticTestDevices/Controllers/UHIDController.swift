// An emulated HID game controller presented to the kernel through /dev/uhid: the kernel's own driver binds it
// as it would the real controller, and every report that driver sends comes back here, decoded by the model
// into motor levels and recorded. One thread serves it, sleeping in `poll` until the kernel asks something or
// (for controllers that stream input) the next input report is due.
internal import CLinuxInput
internal import Glibc
internal import LinuxInput
package import Logging
@_spi(Internals) package import LinuxSystem

/// Why an emulated controller could not be created or bound.
package enum EmulationError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `/dev/uhid` or the USB gadget stack is missing: what, the command that loads it, and the error.
    case transportMissing(String, load: String, SystemCallError)
    /// The transport exists but this process may not use it.
    case permissionDenied(String, SystemCallError)
    /// A request to create or serve the device failed.
    case failed(String, SystemCallError)
    /// The record file could not be opened.
    case recordFileFailed(SystemCallError)
    /// The device exists but no driver made an input device with force feedback of it in time; `driverLoaded`, whether
    /// the driver's module was loaded (or built in) then.
    case notBound(model: String, driver: String, seconds: Double, found: String, driverLoaded: Bool)

    /// Whether the kernel has the driver `module` (`hid-playstation`): loaded, or built in.
    static func moduleIsLoaded(_ module: String) -> Bool {
        Sys.exists("/sys/module/" + module.replacing("-", with: "_"))
    }

    package var description: String {
        switch self {
        case .transportMissing(let what, let load, let error):
            "cannot create the controller: \(error). \(what) is missing: load it as root (`\(load)`), or, in a "
                + "clone of the repository, run it in the bench's guest (`scripts/vm-run -- 'haptics emulate MODEL'`)."
        case .permissionDenied(let what, let error):
            "cannot create the controller: \(error). Run as root, or grant your user access to \(what)."
        case .failed(let what, let error):
            "cannot emulate the controller: \(what): \(error)"
        case .recordFileFailed(let error):
            "cannot open the record file: \(error)"
        case .notBound(let model, let driver, let seconds, let found, let driverLoaded):
            "the kernel made no force-feedback input device of the emulated \(model) within \(seconds) s (\(found)): "
                + (driverLoaded
                    ? "its driver, \(driver), is loaded but did not take it; the kernel log (`dmesg`) says why. A driver "
                        + "refuses a second controller with the address of one present (hid-playstation does): "
                        + "give this one another --uniq."
                    : "is its driver, \(driver), loaded (`modprobe \(driver)`)?")
        }
    }
}

/// Where an emulated controller shows up once its driver has bound it.
package struct EmulatedDeviceNodes: Sendable, Equatable {
    /// The device's sysfs directory (its HID device, or its USB interface for a gadget).
    package var sysfsPath: String
    /// The driver bound to it (`playstation`, `sony`, `xpad`...).
    package var driver: String
    /// Every evdev node the driver made, in sysfs order.
    package var eventNodes: [String]
    /// The node with force feedback: what a rumble client opens.
    package var rumbleNode: String
}

/// An emulated controller on /dev/uhid, served on its own thread until `destroy()` (or deinit).
package final class UHIDController: Sendable {
    /// What was created (the model's identity with any overrides applied).
    package let identity: HIDIdentity
    private let server: UHIDServer
    private let threads: ServingThreads
    /// Opened before the device is created, so its driver's `bind` is heard; taken by the first wait.
    private let binds: Lock<DriverBindWatch?>

    /// Creates the device and starts answering its driver. The driver binds it asynchronously: wait with
    /// `waitUntilBound(driver:timeout:)` before opening its nodes.
    package convenience init(
        _ model: any HIDControllerModel, recordPath: String? = nil, keepsRecords: Bool = true, logger: Logger
    ) throws(EmulationError) {
        let log: DeviceRecordLog
        do { log = try DeviceRecordLog(path: recordPath, keepsRecords: keepsRecords, logger: logger) } catch {
            throw .recordFileFailed(error)
        }
        try self.init(model, log: log, ownsLog: true, logger: logger)
    }

    /// A controller recording into `log`, which it finishes on `destroy()` only when it owns it (a device
    /// unplugged and plugged back in keeps one log across its controllers).
    init(_ model: any HIDControllerModel, log: DeviceRecordLog, ownsLog: Bool, logger: Logger) throws(EmulationError) {
        identity = model.identity
        let fd: Int32
        do {
            fd = try Sys.open(UHIDServer.path, flags: O_RDWR | O_NONBLOCK)
        } catch {
            switch error.errno {
            case .noSuchFileOrDirectory, .noSuchAddressOrDevice, .noDevice:
                throw .transportMissing(UHIDServer.path, load: "modprobe uhid", error)
            case .permissionDenied, .notPermitted:
                throw .permissionDenied(UHIDServer.path, error)
            default: throw .failed("open \(UHIDServer.path)", error)
            }
        }
        let server: UHIDServer
        do {
            server = try UHIDServer(
                fd: fd, model: model, existingDevices: Set(UHIDServer.hidDevices()), log: log, ownsLog: ownsLog,
                logger: logger)
        } catch {
            Sys.close(fd)
            throw error
        }
        self.server = server
        binds = Lock(SysfsInputNodes.openBindWatch(logger: logger))
        do {
            try server.create()
            threads = try ServingThreads([{ server.serve() }], stop: server.stop)
        } catch {
            server.closeDescriptors()
            throw .failed("UHID_CREATE2", error)
        }
        logger.info("emulated controller created", metadata: ["name": "\(identity.name)"])
    }

    deinit { destroy() }

    /// Every record so far (nothing when records are not kept).
    package func records() -> [PadRecord] { server.log.records() }

    /// The input reports the model streamed by itself (`HIDControllerModel.inputReportInterval`).
    package func inputReports() -> [StreamedInputReport] { server.log.inputReports() }

    /// Records from now on; finishes when the device is destroyed.
    package func recordStream() -> AsyncStream<PadRecord> { server.log.subscribe() }

    /// What the motors run at after the last report.
    package var motors: EmulatedMotorOutput { server.state.withLock { $0.motors } }

    /// Waits until the driver has bound the device (its `bind` uevent: the probe returned) and made its input
    /// nodes (see `SysfsInputNodes.wait`).
    package func waitUntilBound(driver: String, timeout: Double = 10) throws(EmulationError) -> EmulatedDeviceNodes {
        let server = server
        let watch = binds.withLock { $0.take() }
        return try SysfsInputNodes.wait(
            model: identity.name, driver: driver, timeout: timeout, binds: watch, logger: server.logger
        ) {
            let ours = UHIDServer.hidDevices().filter {
                !server.existingDevices.contains($0) && $0.hasPrefix(server.sysfsPrefix)
            }
            guard let device = ours.last else { return (nil, "no HID device yet") }
            let path = UHIDServer.sysfsRoot + "/" + device
            let found = "HID device \(device), driver \(SysfsInputNodes.driver(of: path) ?? "none"), no rumble node"
            return (SysfsInputNodes.bound(at: path), found)
        }
    }

    /// Stops serving, then removes the device (`UHID_DESTROY`): to its driver and every client it is unplugged.
    /// Safe to call more than once.
    package func destroy() {
        binds.withLock { $0 = nil }
        guard threads.stopAndJoin(server.stop) else { return }
        server.destroyDevice()
    }
}

/// The uhid descriptor, the model and what it has done, shared by the serving thread and the handle.
private final class UHIDServer: @unchecked Sendable {
    struct State: Sendable {
        var model: any HIDControllerModel
        var motors = EmulatedMotorOutput.off
        var opened = false
    }

    static let path = "/dev/uhid"
    /// Where uhid's HID devices appear: `BBBB:VVVV:PPPP.NNNN` directories.
    static let sysfsRoot = "/sys/devices/virtual/misc/uhid"

    let fd: Int32
    let wake: (read: Int32, write: Int32)
    let log: DeviceRecordLog
    let ownsLog: Bool
    let logger: Logger
    let state: Lock<State>
    let identity: HIDIdentity
    /// HID devices that existed before ours.
    let existingDevices: Set<String>
    /// The name prefix of our HID device in sysfs: bus, vendor and product in upper-case hexadecimal.
    let sysfsPrefix: String

    init(
        fd: Int32, model: any HIDControllerModel, existingDevices: Set<String>, log: DeviceRecordLog, ownsLog: Bool,
        logger: Logger
    ) throws(EmulationError) {
        do {
            wake = try Sys.pipe()
        } catch {
            throw .failed("pipe2", error)
        }
        self.fd = fd
        self.existingDevices = existingDevices
        self.log = log
        self.ownsLog = ownsLog
        self.logger = logger
        identity = model.identity
        state = Lock(State(model: model))
        sysfsPrefix =
            [UInt16(identity.bus.rawValue), identity.vendor, identity.product]
            .map { hex($0, digits: 4).uppercased() }.joined(separator: ":") + "."
    }

    static func hidDevices() -> [String] {
        ((try? Sys.directoryEntries(sysfsRoot)) ?? []).filter(SysfsInputNodes.isHIDDeviceName).sorted()
    }

    func create() throws(SystemCallError) {
        try withEvent { event in
            identity.reportDescriptor.withUnsafeBufferPointer { descriptor in
                cli_uhid_create2(
                    event, identity.name, identity.phys, identity.uniq, descriptor.baseAddress,
                    UInt16(descriptor.count), identity.bus.rawValue, UInt32(identity.vendor),
                    UInt32(identity.product), identity.version, identity.country)
            }
        }
    }

    /// Fills a fresh event with `fill` and writes it.
    func withEvent(_ fill: (UnsafeMutablePointer<uhid_event>) -> Void) throws(SystemCallError) {
        let event = UnsafeMutablePointer<uhid_event>.allocate(capacity: 1)
        defer { event.deallocate() }
        fill(event)
        _ = try Sys.write(fd, UnsafeRawBufferPointer(start: event, count: cli_uhid_event_size()))
    }

    // MARK: Serving

    func serve() {
        // A pad sends its reports on its own clock, whatever the processor the host runs on is doing. The thread
        // standing in for it takes a real-time priority where it may (one step under the top, which the kernel
        // tests' stall witness holds), so that the code under test, on the same processor, does not hold back the
        // reports whose timing it reads and its driver paces frames on.
        let realTime = Sys.runAtRealTimePriority(belowTop: 1)
        logger.debug("emulated controller serving", metadata: ["real-time priority": "\(realTime)"])
        let event = UnsafeMutablePointer<uhid_event>.allocate(capacity: 1)
        defer { event.deallocate() }
        var nextInput: UInt64?
        while true {
            var fds = [
                pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0),
            ]
            let woke: UInt64
            do {
                _ = try Sys.poll(&fds, timeout: timeout(until: nextInput))
                woke = Sys.monotonicNanoseconds()
            } catch {
                logger.info("emulated controller stopped serving", metadata: ["error": "\(error)"])
                return
            }
            if fds[1].revents != 0 { return }
            nextInput = streamInput(due: nextInput)
            if fds[0].revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 {
                logger.info("the uhid descriptor failed; stopped serving")
                return
            }
            if fds[0].revents & Int16(POLLIN) != 0 { drain(event, queuedBy: woke, nextInput: &nextInput) }
        }
    }

    /// Milliseconds until `deadline` (rounded up), or -1 (forever) when there is none.
    private func timeout(until deadline: UInt64?) -> Int32 {
        guard let deadline else { return -1 }
        let now = Sys.monotonicNanoseconds()
        return deadline <= now ? 0 : Int32((deadline - now + 999_999) / 1_000_000)
    }

    /// Sends the streamed input report when it is due; returns the next deadline (nil when not streaming).
    private func streamInput(due: UInt64?) -> UInt64? {
        let now = Sys.monotonicNanoseconds()
        let (report, interval) = state.withLock { state -> ([UInt8]?, Double?) in
            guard state.opened, let interval = state.model.inputReportInterval else { return (nil, nil) }
            guard let due, due <= now else { return (nil, interval) }
            return (state.model.nextInputReport(), interval)
        }
        guard let interval else { return nil }
        let period = UInt64(interval * 1e9)
        if let report, let due {
            sendInput(report)
            log.noteInputReport(
                StreamedInputReport(
                    due: PadTimestamp(microseconds: Int64(due / 1000)),
                    sent: PadTimestamp(microseconds: Int64(now / 1000))))
        }
        guard let due else { return now + period }
        return due <= now ? max(due + period, now) : due
    }

    /// Reads and handles every event queued. An event's time is when the pad got it, as near as this thread can
    /// tell: the first one read was queued before the poll that woke the thread returned (`queuedBy`), so it takes
    /// that instant, and none of the time this thread spends after waking (sending a due input report, reading,
    /// decoding) counts as the kernel's. A later one may have been queued since, so it takes the time it is read.
    private func drain(_ event: UnsafeMutablePointer<uhid_event>, queuedBy: UInt64, nextInput: inout UInt64?) {
        var woke: UInt64? = queuedBy
        while true {
            do {
                _ = try Sys.read(fd, into: UnsafeMutableRawBufferPointer(start: event, count: cli_uhid_event_size()))
            } catch {
                if error.errno != .wouldBlock {
                    logger.info("uhid read failed", metadata: ["error": "\(error)"])
                }
                return
            }
            let time = PadTimestamp(microseconds: Int64((woke ?? Sys.monotonicNanoseconds()) / 1000))
            woke = nil
            handle(event, at: time, nextInput: &nextInput)
        }
    }

    private func handle(_ event: UnsafeMutablePointer<uhid_event>, at time: PadTimestamp, nextInput: inout UInt64?) {
        switch cli_uhid_type(event) {
        case UInt32(UHID_OPEN.rawValue):
            state.withLock { $0.opened = true }
            nextInput = Sys.monotonicNanoseconds()
        case UInt32(UHID_CLOSE.rawValue):
            state.withLock { $0.opened = false }
            nextInput = nil
        case UInt32(UHID_OUTPUT.rawValue):
            var size: UInt16 = 0
            var type: UInt8 = 0
            let data = cli_uhid_output(event, &size, &type)
            receive(Array(UnsafeBufferPointer(start: data, count: Int(size))), via: .interrupt, at: time)
        case UInt32(UHID_GET_REPORT.rawValue):
            answerGetReport(event)
        case UInt32(UHID_SET_REPORT.rawValue):
            answerSetReport(event, at: time)
        default:
            break  // START, STOP: nothing to do; the driver's requests follow.
        }
    }

    private func receive(_ report: [UInt8], via path: HIDOutputPath, at time: PadTimestamp) {
        let (response, motors) = state.withLock { state in
            let response = state.model.receive(report, via: path)
            if let motors = response.motors { state.motors = motors }
            return (response, state.motors)
        }
        response.replies.forEach(sendInput)
        log.append(
            PadRecord(
                outputAt: time, report: report, strong: motors.strong, weak: motors.weak,
                strongFrequency: motors.strongFrequency, weakFrequency: motors.weakFrequency, mode: motors.mode,
                waveform: response.waveform, hdRumble: response.hdRumble, xboxRumble: response.xboxRumble,
                pid: response.pid))
    }

    private func answerGetReport(_ event: UnsafeMutablePointer<uhid_event>) {
        var id: UInt32 = 0
        var number: UInt8 = 0
        var type: UInt8 = 0
        cli_uhid_get_report(event, &id, &number, &type)
        let reply = state.withLock { $0.model.getReport(id: number, type: HIDReportType(rawValue: type) ?? .feature) }
        do {
            try withEvent { answer in
                if let reply {
                    reply.withUnsafeBufferPointer { bytes in
                        cli_uhid_get_report_reply(answer, id, 0, bytes.baseAddress, UInt16(bytes.count))
                    }
                } else {
                    cli_uhid_get_report_reply(answer, id, UInt16(EIO), nil, 0)
                }
            }
        } catch {
            logger.info("could not answer GET_REPORT", metadata: ["report": "\(number)", "error": "\(error)"])
        }
    }

    private func answerSetReport(_ event: UnsafeMutablePointer<uhid_event>, at time: PadTimestamp) {
        var id: UInt32 = 0
        var number: UInt8 = 0
        var type: UInt8 = 0
        var size: UInt16 = 0
        let data = cli_uhid_set_report(event, &id, &number, &type, &size)
        let report = Array(UnsafeBufferPointer(start: data, count: Int(size)))
        receive(report, via: .setReport(HIDReportType(rawValue: type) ?? .feature), at: time)
        do {
            try withEvent { cli_uhid_set_report_reply($0, id, 0) }
        } catch {
            logger.info("could not answer SET_REPORT", metadata: ["report": "\(number)", "error": "\(error)"])
        }
    }

    private func sendInput(_ report: [UInt8]) {
        do {
            try withEvent { event in
                report.withUnsafeBufferPointer { cli_uhid_input2(event, $0.baseAddress, UInt16($0.count)) }
            }
        } catch {
            logger.debug("could not send an input report", metadata: ["error": "\(error)"])
        }
    }

    // MARK: Ending

    func stop() {
        let byte: [UInt8] = [1]
        _ = byte.withUnsafeBytes { try? Sys.write(wake.write, $0) }
    }

    func destroyDevice() {
        do {
            try withEvent { cli_uhid_destroy($0) }
        } catch {
            logger.info(
                "UHID_DESTROY failed; closing the descriptor removes the device", metadata: ["error": "\(error)"])
        }
        closeDescriptors()
        if ownsLog { log.finish() }
        logger.info("emulated controller destroyed", metadata: ["name": "\(identity.name)"])
    }

    func closeDescriptors() {
        Sys.close(fd)
        Sys.close(wake.read)
        Sys.close(wake.write)
        if ownsLog { log.closeFile() }
    }
}

/// What sysfs says about a bound device: its driver and the evdev nodes under it.
enum SysfsInputNodes {
    /// The driver's name (`driver` link's target), nil when none is bound.
    static func driver(of path: String) -> String? {
        guard let target = try? Sys.realPath(path + "/driver") else { return nil }
        return target.split(separator: "/").last.map(String.init)
    }

    /// The nodes under `path` (input/inputN/eventM), or nil until a driver is bound and one of them has force
    /// feedback. With `orHIDDeviceBelow`, a USB interface bound by usbhid is looked through to the HID device
    /// below it (`BBBB:VVVV:PPPP.NNNN`), where the HID driver and the input devices are.
    static func bound(at path: String, orHIDDeviceBelow: Bool = false) -> EmulatedDeviceNodes? {
        if orHIDDeviceBelow, driver(of: path) == "usbhid" {
            let children = ((try? Sys.directoryEntries(path)) ?? []).filter(isHIDDeviceName)
            return children.sorted().lazy.compactMap { bound(at: path + "/" + $0) }.first
        }
        guard let driver = driver(of: path) else { return nil }
        var events: [String] = []
        var rumble: String?
        for input in inputDevices(under: path) {
            let entries = ((try? Sys.directoryEntries(input)) ?? []).filter { $0.hasPrefix("event") }.sorted()
            for entry in entries {
                events.append("/dev/input/" + entry)
                if rumble == nil, hasForceFeedback(input) { rumble = "/dev/input/" + entry }
            }
        }
        guard let rumble, Sys.exists(rumble) else { return nil }
        return EmulatedDeviceNodes(sysfsPath: path, driver: driver, eventNodes: events, rumbleNode: rumble)
    }

    /// The `inputN` directories in `path/input` (where HID drivers and xpad's USB interface put them).
    static func inputDevices(under path: String) -> [String] {
        let direct = ((try? Sys.directoryEntries(path + "/input")) ?? []).filter { $0.hasPrefix("input") }.sorted()
        return direct.map { path + "/input/" + $0 }
    }

    /// A HID device's sysfs name: `BBBB:VVVV:PPPP.NNNN` (bus, vendor, product, instance).
    static func isHIDDeviceName(_ name: String) -> Bool {
        let parts = name.split(separator: ".")
        return parts.count == 2 && parts[0].split(separator: ":").count == 3
    }

    /// A watch for `bind` uevents, opened before a device is created; nil (logged) when the socket cannot open,
    /// and then waits look at sysfs alone.
    static func openBindWatch(logger: Logger) -> DriverBindWatch? {
        do throws(SystemCallError) {
            return try DriverBindWatch()
        } catch {
            logger.warning("cannot hear bind uevents; waiting on sysfs alone", metadata: ["error": "\(error)"])
            return nil
        }
    }

    /// Waits until `look` finds the nodes in sysfs and the device whose driver made them (the last component of
    /// `sysfsPath`) has sent its `bind` uevent, or fails after `timeout` naming what `look` last found. The
    /// driver core makes the `driver` link before it calls the probe, and drivers register their input devices
    /// inside it and finish them after that (hid-microsoft allocates the force-feedback state after marking
    /// `EV_FF`): only `bind`, sent once the probe returned, says the nodes are ready. With `binds` the wait
    /// sleeps until the next uevent; without it (the socket could not open) it looks every 10 ms and takes
    /// nodes as soon as sysfs shows them. Nodes found but no `bind` heard by the deadline (a network namespace
    /// that kernel uevents do not reach) are taken then, with a warning.
    static func wait(
        model: String, driver: String, timeout: Double, binds: DriverBindWatch?, logger: Logger,
        _ look: () -> (EmulatedDeviceNodes?, String)
    ) throws(EmulationError) -> EmulatedDeviceNodes {
        let deadline = MonotonicTime.deadline(afterSeconds: timeout)
        while true {
            // Read the uevents before sysfs, so a `bind` read here describes what `look` sees.
            binds?.drain()
            let (nodes, found) = look()
            if let nodes {
                guard let binds else { return nodes }
                let boundName = nodes.sysfsPath.split(separator: "/").last.map(String.init) ?? ""
                if binds.heardBind(of: boundName) { return nodes }
            }
            if Sys.monotonicNanoseconds() >= deadline {
                guard let nodes else {
                    throw .notBound(
                        model: model, driver: driver, seconds: timeout, found: found,
                        driverLoaded: EmulationError.moduleIsLoaded(driver))
                }
                logger.warning(
                    "no bind uevent heard for the device; using the nodes sysfs shows",
                    metadata: ["device": "\(nodes.sysfsPath)", "seconds": "\(timeout)"])
                return nodes
            }
            if let binds {
                binds.waitForEvents(until: deadline)
            } else {
                Sys.sleep(nanoseconds: 10_000_000)
            }
        }
    }

    /// The `capabilities/ff` bitmap in sysfs is non-zero.
    static func hasForceFeedback(_ input: String) -> Bool {
        guard let text = try? Sys.readSmallFile(input + "/capabilities/ff") else { return false }
        return text.contains { $0 != "0" && $0 != " " && $0 != "\n" }
    }
}
