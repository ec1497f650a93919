import HapticTestDevices
import ArgumentParser
import Dispatch
import HapticRendering
import Glibc
import LinuxHaptics
import LinuxInput
import Logging

struct VirtualPadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "virtual-pad",
        abstract: "Create a uinput force-feedback gamepad and show what clients ask of it.",
        discussion: """
            The pad answers effect uploads and erases, records every upload, erase, play, stop, gain and \
            autocenter, and \
            models the strong/weak motor output a rumble pad driven by the kernel's ff-memless would produce. \
            On a terminal it shows the two motor levels live; otherwise it prints one line per event. \
            Ctrl-C or SIGTERM removes the device. Needs /dev/uinput (`modprobe uinput`) and the right to open it.
            """)

    @Option(help: "Device name as clients see it.")
    var name = VirtualPadConfiguration.defaultName

    @Option(help: "USB-style vendor id, hexadecimal (default 1209, pid.codes).")
    var vendor: String?

    @Option(help: "Product id, hexadecimal (default 0001, a pid.codes test id).")
    var product: String?

    @Option(
        help: ArgumentHelp(
            "Comma-separated force-feedback features to advertise: rumble, periodic, constant, ramp, spring, "
                + "friction, damper, inertia, sine, square, triangle, saw-up, saw-down, custom, gain, autocenter (the "
                + "kernel's spellings, saw_up or FF_SAW_UP, too)."))
    var effects = VirtualPadCommand.defaultEffects

    @Option(
        parsing: .unconditional,
        help: "How many effects a client may upload at once (1...\(VirtualPadConfiguration.maximumEffects)).")
    var maxEffects = VirtualPadConfiguration.defaultMaxEffects

    @Option(help: "Write every record to this file as JSON lines (schema: docs/virtual-pad.md).")
    var record: String?

    @Option(parsing: .unconditional, help: "Answer ENOSPC to every upload after the first N (a full device).")
    var failUploadsAfter: Int?

    static let defaultEffects = "rumble,periodic,sine,square,triangle,saw-up,saw-down,gain"

    func padConfiguration() throws -> VirtualPadConfiguration {
        VirtualPadConfiguration(
            name: name,
            vendor: try Self.hex(vendor, option: "--vendor") ?? VirtualPadConfiguration.defaultVendor,
            product: try Self.hex(product, option: "--product") ?? VirtualPadConfiguration.defaultProduct,
            features: try VirtualPadConfiguration.features(parsing: effects),
            maxEffects: maxEffects, failUploadsAfter: failUploadsAfter, recordPath: record,
            // The command reads records from the stream and the file: memory stays flat however long it runs.
            keepsRecords: false)
    }

    static func hex(_ text: String?, option: String) throws -> UInt16? {
        guard let text else { return nil }
        let digits = text.lowercased().hasPrefix("0x") ? String(text.dropFirst(2)) : text
        guard let value = UInt16(digits, radix: 16) else {
            throw ValidationError("\(option) wants a hexadecimal id 0000...ffff, not '\(text)'")
        }
        return value
    }

    func validate() throws {
        // Checked when the pad is made, after the arguments (a failure, status 1, until 6 December): a usage error.
        if name.isEmpty { throw ValidationError("--name must not be empty: clients tell the pad by it") }
        try OutputFile.check(record, writtenBy: "--record")
        do {
            _ = try padConfiguration()
        } catch let error as VirtualPadError {
            throw ValidationError(error.description)
        }
        if maxEffects < 1 || maxEffects > VirtualPadConfiguration.maximumEffects {
            throw ValidationError("--max-effects must be 1...\(VirtualPadConfiguration.maximumEffects)")
        }
        if let failUploadsAfter, failUploadsAfter < 0 {
            throw ValidationError("--fail-uploads-after must be 0 or more")
        }
    }

    func run() async throws {
        // Signals are routed before the device exists, so a SIGTERM right after creation still removes it.
        let (signals, signalSources) = Self.terminationSignals()
        defer { signalSources.cancel() }
        var logger = Logger(label: "haptics.virtual-pad")
        logger.logLevel = .notice
        let pad: VirtualPad
        do {
            pad = try VirtualPad(try padConfiguration(), logger: logger)
        } catch let error as VirtualPadError {
            // The error says what failed, why, and what to do (a module to load, access to grant).
            throw CommandFailure("\(error)")
        }
        // Subscribed before the node is announced: a client that starts at once is shown from its first call.
        let records = pad.recordStream()
        let features = pad.configuration.features.sorted().map(\.name).joined(separator: ",")
        Console.printLine(
            "created \(pad.eventNode) sysname \(pad.sysname) \"\(pad.configuration.name)\" "
                + "\(Self.hexID(pad.configuration.vendor)):\(Self.hexID(pad.configuration.product)) "
                + "effects \(features) max-effects \(pad.configuration.maxEffects)")

        let view = PadView(pad: pad, records: records, live: LiveLine())
        let watcher = Task { await view.follow() }
        var received: Int32 = 0
        for await signal in signals {
            received = signal
            break
        }
        watcher.cancel()
        pad.destroy()
        await view.finish()
        print("removed \(pad.eventNode) (signal \(received))")
    }

    static func hexID(_ value: UInt16) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 4 - digits.count) + digits
    }

    /// SIGINT and SIGTERM as a stream, so the pad is destroyed on the normal path rather than in a handler.
    static func terminationSignals() -> (AsyncStream<Int32>, TerminationSignals) {
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
        return (stream, TerminationSignals.handle { continuation.yield($0) })
    }
}

/// What the command shows: one line per record, or on a terminal a single line with both motor levels
/// redrawn on every record and at each change point the motor model predicts.
actor PadView {
    let pad: VirtualPad
    let records: AsyncStream<PadRecord>
    let live: LiveLine
    private var redraw: Task<Void, Never>?

    init(pad: VirtualPad, records: AsyncStream<PadRecord>, live: LiveLine) {
        self.pad = pad
        self.records = records
        self.live = live
    }

    func follow() async {
        if live.enabled { draw(now: Self.now()) }
        for await record in records {
            if live.enabled {
                draw(now: Self.now())
            } else {
                Console.printLine(Self.describe(record, levels: pad.motorOutput(at: record.time)))
            }
        }
    }

    func finish() {
        redraw?.cancel()
        live.end()
    }

    private func draw(now: PadTimestamp) {
        let levels = pad.motorOutput(at: now)
        live.redraw(bars: MotorMeter.rawWidths) { MotorMeter.raw(levels, width: $0) }
        redraw?.cancel()
        guard let next = pad.motorModel().nextChange(after: now) else { return }
        let wait = max(next.time.microseconds - now.microseconds, 0)
        redraw = Task { [weak self] in
            try? await Task.sleep(for: .microseconds(wait))
            guard !Task.isCancelled else { return }
            await self?.draw(now: Self.now())
        }
    }

    /// Now on the clock uinput stamps its events with.
    static func now() -> PadTimestamp {
        PadTimestamp(microseconds: Int64((MonotonicClock().now * 1e6).rounded(.down)))
    }

    static func describe(_ record: PadRecord, levels: MotorMagnitudes) -> String {
        var parts = ["\(record.time)", record.event.rawValue]
        if let id = record.id { parts.append("id=\(id)") }
        if let effect = record.effect { parts.append(describe(effect)) }
        if let count = record.count { parts.append("count=\(count)") }
        if let value = record.value { parts.append("value=\(value)") }
        if let retval = record.retval, retval != 0 { parts.append("retval=\(retval)") }
        let (strong, weak) = (ForceFeedbackEffect.magnitude(levels.strong), ForceFeedbackEffect.magnitude(levels.weak))
        parts.append("| motors strong=\(strong) weak=\(weak)")
        return parts.joined(separator: " ")
    }

    static func describe(_ effect: ForceFeedbackEffect) -> String {
        let replay = "length=\(effect.replayLength)ms delay=\(effect.replayDelay)ms"
        switch effect.kind {
        case .rumble(let strong, let weak):
            return "rumble strong=\(strong) weak=\(weak) \(replay)"
        case .periodic(let waveform, let period, let magnitude, _, _, let envelope):
            return "periodic \(waveform.name) period=\(period)ms magnitude=\(magnitude) "
                + "attack=\(envelope.attackLength)ms fade=\(envelope.fadeLength)ms \(replay)"
        case .constant(let level, _):
            return "constant level=\(level) \(replay)"
        case .ramp(let start, let end, _):
            return "ramp \(start)->\(end) \(replay)"
        case .condition(let type, _):
            return "\(type.name) \(replay)"
        }
    }
}
