// A uinput force-feedback gamepad: the test device of the project and a product feature of its own
// (`haptics virtual-pad`). It looks like a gamepad to udev, answers uploads and erases on its own thread,
// and records every request it gets with the kernel's timestamp.
internal import CLinuxInput
internal import Glibc
public import HapticRendering
public import LinuxInput
public import Logging
@_spi(Internals) public import LinuxSystem

/// What the virtual pad looks like and how it behaves.
public struct VirtualPadConfiguration: Sendable, Equatable {
    public var name: String
    public var vendor: UInt16
    public var product: UInt16
    /// The force-feedback bits it advertises (effect types, waveforms, gain...).
    public var features: Set<ForceFeedbackFeature>
    /// How many effects a client may upload at once (`ff_effects_max`).
    public var maxEffects: Int
    /// When set, uploads after the first N are answered `ENOSPC` (a full device).
    public var failUploadsAfter: Int?
    /// When set, every record is appended to this file as a JSON line.
    public var recordPath: String?
    /// Whether `records()` keeps every record in memory, and the motor model its whole history. A long-running
    /// pad with a busy client (the CLI) turns it off: its memory then stays bounded; the stream, the record file
    /// and the motor model's current levels do not depend on it (the model keeps the last ten seconds of history).
    public var keepsRecords: Bool

    public init(
        name: String = Self.defaultName, vendor: UInt16 = Self.defaultVendor, product: UInt16 = Self.defaultProduct,
        features: Set<ForceFeedbackFeature> = Self.defaultFeatures, maxEffects: Int = Self.defaultMaxEffects,
        failUploadsAfter: Int? = nil, recordPath: String? = nil, keepsRecords: Bool = true
    ) {
        self.name = name
        self.vendor = vendor
        self.product = product
        self.features = features
        self.maxEffects = maxEffects
        self.failUploadsAfter = failUploadsAfter
        self.recordPath = recordPath
        self.keepsRecords = keepsRecords
    }

    public static let defaultName = "Haptics Virtual Rumble Pad"
    /// pid.codes' vendor id with its first test product id (1209:0001): reserved for testing, so no real
    /// device and no driver quirk table claims it.
    public static let defaultVendor: UInt16 = 0x1209
    public static let defaultProduct: UInt16 = 0x0001
    /// What a typical ff-memless rumble pad advertises, plus the waveforms a periodic client may ask for.
    public static let defaultFeatures: Set<ForceFeedbackFeature> = [
        .rumble, .periodic, .sine, .square, .triangle, .sawUp, .sawDown, .gain,
    ]
    /// ff-memless's slot count (`FF_MEMLESS_EFFECTS`).
    public static let defaultMaxEffects = 16
    /// The kernel's ceiling (`FF_MAX_EFFECTS`, equal to `FF_GAIN`): effect ids share the code space of
    /// `EV_FF` events with `FF_GAIN` and `FF_AUTOCENTER`.
    public static let maximumEffects = 96

    /// Parses a comma-separated feature list such as `rumble,periodic,sine,saw-up,gain`.
    public static func features(parsing list: String) throws(VirtualPadError) -> Set<ForceFeedbackFeature> {
        var features: Set<ForceFeedbackFeature> = []
        for item in list.split(separator: ",", omittingEmptySubsequences: false) {
            let name = item.trimmingCharacters(in: " ")
            guard let feature = ForceFeedbackFeature(name: name) else {
                let known = ForceFeedbackFeature.allCases.map { $0.name.replacing("_", with: "-") }
                throw .invalidConfiguration(
                    "unknown force-feedback feature '\(name)'; known: \(known.joined(separator: ","))")
            }
            features.insert(feature)
        }
        return features
    }

    func validate() throws(VirtualPadError) {
        if name.isEmpty { throw .invalidConfiguration("the pad needs a non-empty name") }
        if features.isEmpty { throw .invalidConfiguration("the pad needs at least one force-feedback feature") }
        if !(1...Self.maximumEffects).contains(maxEffects) {
            throw .invalidConfiguration("max effects must be 1...\(Self.maximumEffects), not \(maxEffects)")
        }
        if let failUploadsAfter, failUploadsAfter < 0 {
            throw .invalidConfiguration("fail-uploads-after must be 0 or more, not \(failUploadsAfter)")
        }
    }
}

extension StringProtocol {
    fileprivate func trimmingCharacters(in set: Character) -> String {
        String(drop(while: { $0 == set }).reversed().drop(while: { $0 == set }).reversed())
    }
}

/// Why the virtual pad could not be created.
public enum VirtualPadError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `/dev/uinput` does not exist.
    case uinputMissing(SystemCallError)
    /// `/dev/uinput` exists but this process may not open it.
    case permissionDenied(SystemCallError)
    case invalidConfiguration(String)
    /// A uinput set-up request failed.
    case setupFailed(SystemCallError)
    /// The device was created but its evdev node did not show up in sysfs (is `evdev` loaded?).
    case eventNodeNotFound(sysname: String)
    case recordFileFailed(SystemCallError)

    public var description: String {
        switch self {
        case .uinputMissing(let error):
            "cannot create the virtual pad: \(error). The uinput module is not loaded: run `modprobe uinput` as root."
        case .permissionDenied(let error):
            "cannot create the virtual pad: \(error). Run as root, or grant your user access to /dev/uinput "
                + "(for example a udev rule with GROUP/MODE or TAG+=\"uaccess\" for KERNEL==\"uinput\")."
        case .invalidConfiguration(let reason):
            "invalid virtual pad configuration: \(reason)"
        case .setupFailed(let error):
            "cannot create the virtual pad: \(error)"
        case .eventNodeNotFound(let sysname):
            "the virtual pad \(sysname) has no event node under /sys/devices/virtual/input/\(sysname): "
                + "is the evdev module loaded (`modprobe evdev`)?"
        case .recordFileFailed(let error):
            "cannot open the record file: \(error)"
        }
    }
}

/// A uinput force-feedback gamepad served on its own thread until `destroy()` (or deinit).
public final class VirtualPad: Sendable {
    public let configuration: VirtualPadConfiguration
    /// Its evdev node, `/dev/input/eventN`: what clients open.
    public let eventNode: String
    /// Its input device name in sysfs, `inputN`.
    public let sysname: String

    private let server: PadServer
    private let threads: ServingThreads

    /// Creates the device and starts serving it. Blocks only for the uinput set-up ioctls.
    public init(_ configuration: VirtualPadConfiguration = .init(), logger: Logger) throws(VirtualPadError) {
        try configuration.validate()
        self.configuration = configuration
        let uinput: Int32
        do {
            uinput = try Sys.open(Self.uinputPath, flags: O_RDWR | O_NONBLOCK)
        } catch {
            switch error.errno {
            case .noSuchFileOrDirectory, .noSuchAddressOrDevice, .noDevice: throw .uinputMissing(error)
            case .permissionDenied, .notPermitted: throw .permissionDenied(error)
            default: throw .setupFailed(error)
            }
        }
        let wake: (read: Int32, write: Int32)
        do {
            wake = try Sys.pipe()
        } catch {
            Sys.close(uinput)
            throw .setupFailed(error)
        }
        let log: DeviceRecordLog
        do throws(VirtualPadError) {
            try Self.declareGamepad(uinput, configuration)
            sysname = try Self.sysname(of: uinput)
            eventNode = try Self.eventNode(ofSysname: sysname)
            do {
                log = try DeviceRecordLog(
                    path: configuration.recordPath, keepsRecords: configuration.keepsRecords, logger: logger)
            } catch {
                throw .recordFileFailed(error)
            }
        } catch {
            // Closing the uinput descriptor destroys a created device too.
            for fd in [uinput, wake.read, wake.write] { Sys.close(fd) }
            throw error
        }
        server = PadServer(
            uinput: uinput, wake: wake, log: log, failUploadsAfter: configuration.failUploadsAfter,
            keepsHistory: configuration.keepsRecords, logger: logger)
        let server = self.server
        do {
            threads = try ServingThreads([{ server.serve() }], stop: server.stop)
        } catch {
            server.closeDescriptors()
            throw .setupFailed(error)
        }
        logger.info(
            "virtual pad created",
            metadata: ["node": "\(eventNode)", "sysname": "\(sysname)", "effects": "\(configuration.maxEffects)"])
    }

    deinit { destroy() }

    /// Everything recorded so far, in arrival order (nothing when `keepsRecords` is off).
    public func records() -> [PadRecord] { server.log.records() }

    /// Records from now on (and none from before); finishes when the pad is destroyed.
    public func recordStream() -> AsyncStream<PadRecord> { server.log.subscribe() }

    /// The effect ids uploaded to the pad and not erased since: the slots its clients hold, as the kernel asked
    /// the pad to keep them (an upload it refused holds none).
    public func uploadedEffects() -> Set<Int16> { server.state.withLock { $0.uploaded } }

    /// A copy of the motor model fed with every record so far.
    public func motorModel() -> MotorModel { server.state.withLock { $0.model } }

    /// The motor output the pad is being asked to produce at `time` (see `MotorModel`).
    public func motorOutput(at time: PadTimestamp) -> MotorMagnitudes { motorModel().output(at: time) }

    /// Stops serving, then removes the device (`UI_DEV_DESTROY`) and closes every descriptor. Clients
    /// holding the node see `ENODEV` on their next call. Safe to call more than once.
    public func destroy() {
        guard threads.stopAndJoin(server.stop) else { return }
        server.destroyDevice()
    }

    // MARK: Set-up

    private static func ioctl(_ fd: Int32, _ request: UInt, _ name: String, value: Int32) throws(VirtualPadError) {
        do { _ = try Sys.ioctl(fd, request, name, value: value) } catch { throw .setupFailed(error) }
    }

    private static func ioctl(
        _ fd: Int32, _ request: UInt, _ name: String, _ argument: UnsafeMutableRawPointer
    ) throws(VirtualPadError) {
        do { _ = try Sys.ioctl(fd, request, name, argument) } catch { throw .setupFailed(error) }
    }

    /// Buttons and axes of a standard gamepad, so udev's `input_id` tags it `ID_INPUT_JOYSTICK` and game
    /// libraries treat it as a controller; then the FF bits, the identity and `UI_DEV_CREATE`.
    private static func declareGamepad(_ fd: Int32, _ configuration: VirtualPadConfiguration) throws(VirtualPadError) {
        for eventType in [EV_KEY, EV_ABS, EV_FF] {
            try ioctl(fd, cli_UI_SET_EVBIT(), "UI_SET_EVBIT", value: Int32(eventType))
        }
        for button in gamepadButtons {
            try ioctl(fd, cli_UI_SET_KEYBIT(), "UI_SET_KEYBIT", value: button)
        }
        for axis in gamepadAxes {
            var setup = uinput_abs_setup()
            setup.code = UInt16(axis.code)
            setup.absinfo.minimum = axis.range.lowerBound
            setup.absinfo.maximum = axis.range.upperBound
            try ioctl(fd, cli_UI_ABS_SETUP(), "UI_ABS_SETUP", &setup)
        }
        for feature in configuration.features.sorted() {
            try ioctl(fd, cli_UI_SET_FFBIT(), "UI_SET_FFBIT", value: Int32(feature.rawValue))
        }
        var setup = uinput_setup()
        setup.id.bustype = UInt16(BUS_VIRTUAL)
        setup.id.vendor = configuration.vendor
        setup.id.product = configuration.product
        setup.id.version = padVersion
        setup.ff_effects_max = UInt32(configuration.maxEffects)
        withUnsafeMutableBytes(of: &setup.name) { buffer in
            // Leave the last byte zero: the kernel reads a C string of at most UINPUT_MAX_NAME_SIZE.
            let bytes = Array(configuration.name.utf8.prefix(buffer.count - 1))
            buffer.copyBytes(from: bytes)
        }
        try ioctl(fd, cli_UI_DEV_SETUP(), "UI_DEV_SETUP", &setup)
        do { _ = try Sys.ioctl(fd, cli_UI_DEV_CREATE(), "UI_DEV_CREATE") } catch { throw .setupFailed(error) }
    }

    private static func sysname(of fd: Int32) throws(VirtualPadError) -> String {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: sysnameCapacity, alignment: 1)
        defer { buffer.deallocate() }
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        guard let base = buffer.baseAddress else {
            throw .setupFailed(SystemCallError(.noMemory, call: "UI_GET_SYSNAME buffer"))
        }
        try ioctl(fd, cli_UI_GET_SYSNAME(UInt32(sysnameCapacity)), "UI_GET_SYSNAME", base)
        return String(decoding: buffer.prefix(while: { $0 != 0 }), as: UTF8.self)
    }

    /// The evdev child of the input device in sysfs names the node; `/dev/input` cannot be trusted to
    /// hold only ours (a VM already has an AT keyboard on event0).
    private static func eventNode(ofSysname sysname: String) throws(VirtualPadError) -> String {
        let entries = (try? Sys.directoryEntries("/sys/devices/virtual/input/\(sysname)")) ?? []
        guard let event = entries.first(where: { $0.hasPrefix("event") }) else {
            throw .eventNodeNotFound(sysname: sysname)
        }
        return "/dev/input/\(event)"
    }

    private static let uinputPath = "/dev/uinput"
    /// Room for `inputN`; sysfs names of input devices are short.
    private static let sysnameCapacity = 64
    private static let padVersion: UInt16 = 1
    private static let gamepadButtons: [Int32] = [
        BTN_SOUTH, BTN_EAST, BTN_NORTH, BTN_WEST, BTN_TL, BTN_TR, BTN_TL2, BTN_TR2,
        BTN_SELECT, BTN_START, BTN_MODE, BTN_THUMBL, BTN_THUMBR,
    ]
    /// Sticks in the signed 16-bit range, analogue triggers 0...255 and a d-pad hat, like xpad reports.
    private static let gamepadAxes: [(code: Int32, range: ClosedRange<Int32>)] = [
        (ABS_X, -32768...32767), (ABS_Y, -32768...32767), (ABS_RX, -32768...32767), (ABS_RY, -32768...32767),
        (ABS_Z, 0...255), (ABS_RZ, 0...255), (ABS_HAT0X, -1...1), (ABS_HAT0Y, -1...1),
    ]
}

// MARK: - The serving thread

/// The descriptors and recorded state shared by the pad and its thread.
private final class PadServer: Sendable {
    struct State: Sendable {
        var model = MotorModel()
        var uploadsSeen = 0
        var uploaded: Set<Int16> = []
    }

    let uinput: Int32
    let wake: (read: Int32, write: Int32)
    let log: DeviceRecordLog
    let failUploadsAfter: Int?
    /// Whether the motor model keeps its whole history; without it, the last `recentHistorySeconds`.
    let keepsHistory: Bool
    let logger: Logger
    let state = Lock(State())

    /// What a pad that keeps no records (a long-running one: the CLI) keeps of its motor model's output: enough to
    /// read the levels at any record's time as it arrives, bounded however long it serves.
    static let recentHistorySeconds = 10.0

    init(
        uinput: Int32, wake: (read: Int32, write: Int32), log: DeviceRecordLog, failUploadsAfter: Int?,
        keepsHistory: Bool, logger: Logger
    ) {
        self.uinput = uinput
        self.wake = wake
        self.log = log
        self.failUploadsAfter = failUploadsAfter
        self.keepsHistory = keepsHistory
        self.logger = logger
    }

    /// uinput queues at most 16 events (`UINPUT_BUFFER_SIZE`) and overwrites the oldest when full, so the
    /// thread drains everything each time it wakes.
    private static let readBatch = 16

    /// Sleeps in `poll` until the kernel queues something or `stop()` writes to the wake pipe.
    func serve() {
        var events = [input_event](repeating: input_event(), count: Self.readBatch)
        while true {
            var fds = [
                pollfd(fd: uinput, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0),
            ]
            do {
                _ = try Sys.poll(&fds, timeout: -1)
            } catch {
                logger.info("virtual pad stopped serving", metadata: ["error": "\(error)"])
                return
            }
            if fds[1].revents != 0 { return }
            if fds[0].revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 {
                logger.info("virtual pad's uinput descriptor failed; stopped serving")
                return
            }
            drain(into: &events)
        }
    }

    private func drain(into events: inout [input_event]) {
        while true {
            let count: Int
            let result = events.withUnsafeMutableBytes { buffer in
                Result { () throws(SystemCallError) in try Sys.read(uinput, into: buffer) }
            }
            switch result {
            case .success(let bytes):
                count = bytes / MemoryLayout<input_event>.stride
            case .failure(let error):
                if error.errno != .wouldBlock {
                    logger.info("virtual pad read failed", metadata: ["error": "\(error)"])
                }
                return
            }
            for event in events.prefix(count) { handle(event) }
            if count < events.count { return }
        }
    }

    private func handle(_ event: input_event) {
        let time = PadTimestamp(microseconds: Int64(event.time.tv_sec) * 1_000_000 + Int64(event.time.tv_usec))
        switch Int32(event.type) {
        case cli_EV_UINPUT() where Int32(event.code) == cli_UI_FF_UPLOAD():
            answerUpload(request: UInt32(bitPattern: event.value), time: time)
        case cli_EV_UINPUT() where Int32(event.code) == cli_UI_FF_ERASE():
            answerErase(request: UInt32(bitPattern: event.value), time: time)
        case EV_FF where event.code == ForceFeedbackFeature.gain.rawValue:
            publish(PadRecord(event: .gain, time: time, value: UInt16(truncatingIfNeeded: event.value)))
        case EV_FF where event.code == ForceFeedbackFeature.autocenter.rawValue:
            publish(PadRecord(event: .autocenter, time: time, value: UInt16(truncatingIfNeeded: event.value)))
        case EV_FF:
            let id = Int16(truncatingIfNeeded: event.code)
            if event.value > 0 {
                publish(PadRecord(event: .play, time: time, id: id, count: event.value))
            } else {
                publish(PadRecord(event: .stop, time: time, id: id))
            }
        default:
            return
        }
    }

    private func answerUpload(request: UInt32, time: PadTimestamp) {
        var upload = uinput_ff_upload()
        upload.request_id = request
        do {
            _ = try Sys.ioctl(uinput, cli_UI_BEGIN_FF_UPLOAD(), "UI_BEGIN_FF_UPLOAD", &upload)
        } catch {
            logger.info("virtual pad could not take an upload", metadata: ["error": "\(error)"])
            return
        }
        let seen = state.withLock { state in
            state.uploadsSeen += 1
            return state.uploadsSeen
        }
        let effect = try? ForceFeedbackEffect(upload.effect)
        let retval: Int32
        if let failUploadsAfter, seen > failUploadsAfter {
            retval = -Errno.noSpace.rawValue
        } else {
            retval = effect == nil ? -Errno.invalidArgument.rawValue : 0
        }
        upload.retval = retval
        do {
            _ = try Sys.ioctl(uinput, cli_UI_END_FF_UPLOAD(), "UI_END_FF_UPLOAD", &upload)
        } catch {
            logger.info("virtual pad could not answer an upload", metadata: ["error": "\(error)"])
        }
        // uinput hands over a zeroed `old` for a new slot; a type means the client replaced an effect.
        publish(
            PadRecord(
                event: .upload, time: time, id: upload.effect.id, effect: effect, replacing: upload.old.type != 0,
                retval: retval))
    }

    private func answerErase(request: UInt32, time: PadTimestamp) {
        var erase = uinput_ff_erase()
        erase.request_id = request
        do {
            _ = try Sys.ioctl(uinput, cli_UI_BEGIN_FF_ERASE(), "UI_BEGIN_FF_ERASE", &erase)
            erase.retval = 0
            _ = try Sys.ioctl(uinput, cli_UI_END_FF_ERASE(), "UI_END_FF_ERASE", &erase)
        } catch {
            logger.info("virtual pad could not answer an erase", metadata: ["error": "\(error)"])
            return
        }
        publish(PadRecord(event: .erase, time: time, id: Int16(truncatingIfNeeded: erase.effect_id), retval: 0))
    }

    /// The motor model and the uploaded set first: a subscriber woken by the record reads what it implies.
    private func publish(_ record: PadRecord) {
        state.withLock { state in
            state.model.apply(record)
            if !keepsHistory { state.model.keepHistory(seconds: Self.recentHistorySeconds, before: record.time) }
            switch record.event {
            case .upload where record.retval == 0: if let id = record.id { state.uploaded.insert(id) }
            case .erase: if let id = record.id { state.uploaded.remove(id) }
            default: break
            }
        }
        log.append(record)
    }

    func stop() {
        let byte: [UInt8] = [1]
        _ = byte.withUnsafeBytes { try? Sys.write(wake.write, $0) }
    }

    func destroyDevice() {
        do {
            _ = try Sys.ioctl(uinput, cli_UI_DEV_DESTROY(), "UI_DEV_DESTROY")
        } catch {
            logger.info(
                "virtual pad destroy failed; closing its descriptor removes it", metadata: ["error": "\(error)"])
        }
        closeDescriptors()
        log.finish()
        logger.info("virtual pad destroyed")
    }

    func closeDescriptors() {
        Sys.close(uinput)
        Sys.close(wake.read)
        Sys.close(wake.write)
        log.closeFile()
    }
}
