import AHAP
import ArgumentParser
import AudioRendering
import HapticRendering
import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import HapticTestDevices
import LinuxAudio
@_spi(Internals) import LinuxSystem
import Logging

struct EmulateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "emulate",
        abstract:
            "Present an emulated game controller that the kernel's own driver binds, and show what its motors receive.",
        discussion: """
            The Sony, Xbox Wireless and Switch controllers are created through /dev/uhid (module uhid); the \
            Xbox 360 pad, the DragonRise pad and the PID joystick are USB gadgets on the dummy host controller \
            (modules dummy_hcd, libcomposite, usb_f_fs, configfs mounted; the last two bound through usbhid). The \
            controller answers what its driver asks while probing, decodes every report the driver sends into \
            the levels the real controller's motors would run, and records them. On a terminal it shows the \
            motor levels live; otherwise it prints one line per report. The DualSense over Bluetooth also \
            plays the haptics reports (0x32) written to its hidraw node on its voice coils, and shows their \
            level and dominant frequency. The Switch Pro Controller shows both bands (frequency and amplitude) \
            of each actuator's HD rumble, the Xbox Wireless Controller its two trigger motors and the timing of \
            its rumble reports, the PID joystick every PID report hid-pidff sent, decoded. Ctrl-C or SIGTERM removes the device. `haptics emulate --list` shows \
            the models.
            """)

    @Argument(help: "The controller to emulate (see --list).")
    var model: EmulatedModel?

    @Flag(help: "List the models: name, kernel driver, transport, product.")
    var list = false

    @Option(
        help: ArgumentHelp(
            "The device name its driver sees (default: the real controller's; the uhid models only: the USB "
                + "gadgets keep the real pad's USB strings, which their driver names them by)."))
    var name: String?

    @Option(help: "Its serial or Bluetooth address (uniq; a MAC such as aa:bb:cc:dd:ee:ff for Sony pads).")
    var uniq: String?

    @Option(help: "Write every report as a JSON line (schema: docs/virtual-pad.md, event \"output\").")
    var record: String?

    @Option(
        help: ArgumentHelp(
            "dualsense-bt: write what its voice coils played as a WAV (3000 Hz, stereo, 16-bit) when it exits.",
            valueName: "path"))
    var hapticsWav: String?

    @Option(
        parsing: .unconditional, help: "Seconds to wait for the driver to bind it, more than 0 and at most an hour.")
    var bindTimeout = 15.0

    /// The longest `--bind-timeout`: an hour, far past any driver's probe.
    static let longestBindTimeout = 3600.0

    func validate() throws {
        // `!(... )` also refuses a value that is not a number.
        if !(bindTimeout > 0 && bindTimeout <= Self.longestBindTimeout) {
            throw ValidationError(
                "--bind-timeout takes a positive number of seconds, at most \(Int(Self.longestBindTimeout)) (an hour)")
        }
        if !list, model == nil { throw ValidationError("name a model, or --list to see them") }
        try OutputFile.check(record, writtenBy: "--record")
        if name != nil, let model, model.isUSBGadget {
            throw ValidationError(
                "--name is for the uhid models: \(model.rawValue) is a USB gadget, which its driver names by the real "
                    + "pad's USB strings")
        }
        if let uniq, let model, [.dualsense, .dualsenseBluetooth, .dualshock4, .dualshock4Bluetooth].contains(model),
            PlayStationMAC.parse(uniq) == nil
        {
            // The driver reports the address the pad gives; one that is not an address was replaced by the default.
            throw ValidationError(
                "--uniq of a Sony pad is its Bluetooth address, six hexadecimal bytes such as aa:bb:cc:dd:ee:ff")
        }
        if hapticsWav != nil, model != .dualsenseBluetooth {
            throw ValidationError("--haptics-wav needs dualsense-bt: only it has voice coils fed by reports")
        }
        // The WAV is written when the controller is removed: a path it cannot be written to is said now, not after
        // the session it would have held (until 6 December).
        if let hapticsWav {
            let folder = URL(fileURLWithPath: hapticsWav).deletingLastPathComponent().path
            if let why = DocumentFile.notRegular(hapticsWav) {
                throw ValidationError(
                    "--haptics-wav names \(hapticsWav.shownInMessage), which is no regular file: \(why)")
            }
            if !Sys.access(folder, W_OK) {
                throw ValidationError(
                    "--haptics-wav: \(folder.shownInMessage) is not a folder this user may write in")
            }
        }
    }

    func run() async throws {
        if list {
            // Each column as wide as its longest entry and two spaces more, so that every row lines up.
            let rows = EmulatedModel.allCases.map { [$0.rawValue, $0.module, $0.transport, $0.product] }
            let widths = (0..<3).map { column in rows.map { $0[column].count }.max()! + 2 }
            for row in rows {
                print((0..<3).map { Self.pad(row[$0], widths[$0]) }.joined() + row[3])
            }
            return
        }
        guard let model else { throw ExitCode.validationFailure }
        let (signals, signalSources) = VirtualPadCommand.terminationSignals()
        defer { signalSources.cancel() }
        var logger = Logger(label: "haptics.emulate")
        logger.logLevel = .notice
        let device: any EmulatedDevice
        let nodes: EmulatedDeviceNodes
        do {
            device = try model.start(name: name, uniq: uniq, recordPath: record, keepsRecords: false, logger: logger)
            do {
                nodes = try device.waitUntilBound(timeout: bindTimeout)
            } catch {
                device.destroy()
                throw error
            }
        } catch {
            throw CommandFailure(
                "cannot emulate \(model.rawValue)", why: "\(error)",
                fix:
                    "docs/emulation.md lists what each model needs (root, /dev/uhid or the USB gadget modules, its driver)."
            )
        }
        let records = device.recordStream()
        Console.printLine(
            "created \(model.rawValue): driver \(nodes.driver), rumble node \(nodes.rumbleNode), "
                + "nodes \(nodes.eventNodes.joined(separator: " "))")
        let view = EmulatorView(records: records, live: LiveLine(), keepsWaveform: hapticsWav != nil)
        let watcher = Task { await view.follow() }
        var received: Int32 = 0
        for await signal in signals {
            received = signal
            break
        }
        device.destroy()
        let playback = await watcher.value
        // The controller is gone whether or not the WAV could be written: say so last either way.
        var wavFailure: (any Error)?
        if let hapticsWav {
            do { try Self.writeWAV(playback, to: hapticsWav) } catch { wavFailure = error }
        }
        print("removed \(model.rawValue) (signal \(received))")
        if let wavFailure { throw wavFailure }
    }

    /// Writes what the voice coils played, from the first report to the end of the last, silence in the gaps.
    static func writeWAV(_ playback: VoiceCoilPlayback, to path: String) throws {
        let waveform = playback.waveform()
        guard
            let clip = AudioClip(
                sampleRate: waveform.sampleRate, channelCount: 2, samples: waveform.interleaved)
        else { return }
        do {
            try AudioFile.write(clip, to: path, format: .wav16)
        } catch {
            throw CommandFailure(
                "cannot write the voice coils' WAV", why: "\(error)", fix: "Name a writable path in --haptics-wav.")
        }
        Console.printLine(
            "wrote \(path): \(playback.played.count) haptics reports, \(EmulatorView.seconds(waveform.duration)) s, "
                + "\(playback.underruns.count) underruns, \(playback.refusedCount) refused")
    }

    static func pad(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(width - text.count, 1))
    }
}

/// What `haptics emulate` shows: one line per report, or on a terminal one line of motor meters redrawn on
/// every report, with the voice coils' level and dominant frequency when haptics reports arrive, the Switch Pro
/// Controller's HD rumble bands and the Xbox Wireless Controller's trigger motors.
struct EmulatorView: Sendable {
    let records: AsyncStream<PadRecord>
    let live: LiveLine
    /// Keep every played report (for the WAV); otherwise only the recent ones the view measures.
    var keepsWaveform = false

    /// The stretch of playback the live view measures.
    static let coilWindow = 0.05

    /// Shows the records until the stream ends; returns the voice coils' playback of them.
    func follow() async -> VoiceCoilPlayback {
        var playback = VoiceCoilPlayback()
        var coils = ""
        var coilsMeasured = -Double.infinity
        // The last HD rumble or trigger command, shown until the next: the pad holds it meanwhile.
        var command = ""
        if live.enabled { draw(strong: 0, weak: 0, extra: "") }
        for await record in records where record.event == .output {
            if let text = Self.liveCommand(record) { command = text }
            if let packet = record.waveform {
                playback.receive(packet, at: record.time)
                let end = playback.end ?? record.time.seconds
                // Measured at most once per window: a Goertzel scan per report would cost more than it shows.
                if live.enabled, record.time.seconds >= coilsMeasured + Self.coilWindow {
                    coilsMeasured = record.time.seconds
                    coils = Self.coils(playback.waveform(from: end - Self.coilWindow, through: end))
                }
                if !keepsWaveform { playback.discardPlayed(endingBefore: end - Self.coilWindow) }
            }
            if live.enabled {
                let extra = command.isEmpty ? Self.extra(record) : command
                draw(strong: record.strong ?? 0, weak: record.weak ?? 0, extra: extra + coils)
            } else {
                Console.printLine(Self.describe(record))
            }
        }
        live.end()
        return playback
    }

    /// Each voice coil's RMS level (0...1 of full scale) and dominant frequency over `waveform`.
    static func coils(_ waveform: PlayedWaveform) -> String {
        let parts = VoiceCoil.allCases.map { coil in
            let samples = waveform.samples(coil)
            let frequency = WaveformAnalysis.dominantFrequency(samples, sampleRate: waveform.sampleRate)
            return (coil == .left ? "L " : "R ") + level(WaveformAnalysis.rms(samples))
                + (frequency.map { " \(Int($0.rounded())) Hz" } ?? "")
        }
        return "  coils " + parts.joined(separator: ", ")
    }

    static func seconds(_ value: Double) -> String { level(value) }

    private func draw(strong: Double, weak: Double, extra: String) {
        live.redraw(bars: MotorMeter.rawWidths) {
            MotorMeter.raw(MotorMagnitudes(strong: strong, weak: weak), width: $0) + extra
        }
    }

    /// The model's fields beyond two levels: HD rumble frequencies, the DualSense's vibration mode.
    static func extra(_ record: PadRecord) -> String {
        var parts: [String] = []
        if let frequency = record.strongFrequency { parts.append("strong \(Int(frequency.rounded())) Hz") }
        if let frequency = record.weakFrequency { parts.append("weak \(Int(frequency.rounded())) Hz") }
        if let mode = record.mode { parts.append("mode \(mode)") }
        return parts.isEmpty ? "" : "  " + parts.joined(separator: ", ")
    }

    static func describe(_ record: PadRecord) -> String {
        let strong = record.strong ?? 0, weak = record.weak ?? 0
        return
            "\(record.time) output \(record.report ?? "") | motors strong=\(Self.level(strong)) weak=\(Self.level(weak))"
            + extra(record) + (record.waveform.map(Self.describe) ?? "") + (record.hdRumble.map(Self.describe) ?? "")
            + (record.xboxRumble.map(Self.describe) ?? "") + (record.pid.map { " | pid " + Self.describe($0) } ?? "")
    }

    /// A PID joystick's report: its kind and the fields it carries (levels in the kernel's units, times in ms).
    static func describe(_ report: PIDReport) -> String {
        var parts = [report.kind.rawValue]
        let numbers: [(String, Int?)] = [
            ("block", report.blockIndex), ("duration", report.duration), ("delay", report.startDelay),
            ("magnitude", report.magnitude), ("offset", report.offset), ("phase", report.phase),
            ("period", report.period), ("attack", report.attackLevel), ("attackTime", report.attackTime),
            ("fade", report.fadeLevel), ("fadeTime", report.fadeTime), ("loops", report.loopCount),
        ]
        if let type = report.effectType { parts.append(type.rawValue) }
        for (name, value) in numbers { if let value { parts.append("\(name) \(value)") } }
        if let gain = report.gain { parts.append("gain \(level(gain))") }
        if let operation = report.operation { parts.append(operation.rawValue) }
        if let control = report.control { parts.append(control.rawValue) }
        if let status = report.status { parts.append(status.rawValue) }
        return parts.joined(separator: " ")
    }

    /// A Switch Pro Controller frame: its counter and both bands of each actuator, or that the pad ignores it.
    static func describe(_ packet: SwitchRumblePacket) -> String {
        let side = { (actuator: SwitchRumblePacket.Actuator) in
            "low \(hertz(actuator.lowFrequency)) \(level(actuator.lowAmplitude)) "
                + "high \(hertz(actuator.highFrequency)) \(level(actuator.highAmplitude))"
        }
        return " | hd #\(packet.counter) L \(side(packet.left)), R \(side(packet.right))"
            + (packet.played ? "" : " (ignored: vibration off)")
    }

    /// An Xbox Wireless Controller command: the trigger motors' magnitudes, the enable mask and the timing.
    static func describe(_ packet: XboxRumblePacket) -> String {
        let mask = String(packet.enable, radix: 16)
        return " | triggers left=\(level(packet.leftTrigger)) right=\(level(packet.rightTrigger)) enable 0x"
            + String(repeating: "0", count: max(0, 2 - mask.count)) + mask
            + " duration \(packet.duration) delay \(packet.startDelay) loops \(packet.loopCount)"
    }

    /// The live line's view of a command that the pad holds (HD rumble bands, trigger motors); nil for a record
    /// without one.
    static func liveCommand(_ record: PadRecord) -> String? {
        if let packet = record.hdRumble {
            let side = { (actuator: SwitchRumblePacket.Actuator) in
                "\(Int(actuator.lowFrequency.rounded()))/\(Int(actuator.highFrequency.rounded())) Hz "
                    + "\(percent(actuator.lowAmplitude))/\(percent(actuator.highAmplitude))"
            }
            let state = packet.played ? "" : " (vibration off)"
            return "  L \(side(packet.left))  R \(side(packet.right))" + state
        }
        if let report = record.pid { return "  pid " + describe(report) }
        if let packet = record.xboxRumble {
            let command = XboxRumblePlayback.Command(arrival: 0, packet: packet)
            let levels = command.levels
            let play = command.end - command.arrival
            let timing = play < Self.shownPlayLength ? " for \(seconds(play)) s" : ""
            return "  triggers L \(percent(levels.leftTrigger)) R \(percent(levels.rightTrigger))" + timing
        }
        return nil
    }

    /// Commands that stop by themselves sooner than this show when they do (hid-microsoft's and SDL's run ten
    /// minutes: "until the next").
    static let shownPlayLength = 10.0

    static func hertz(_ value: Double) -> String { "\(Int(value.rounded())) Hz" }

    static func percent(_ value: Double) -> String { "\(Int((value * 100).rounded()))%" }

    /// A haptics report: its counter, and the RMS of each coil's samples, or why it is not played.
    static func describe(_ packet: WaveformPacket) -> String {
        guard let left = packet.left, let right = packet.right else {
            return " | haptics #\(packet.counter) refused (\(packet.crcValid ? "headers" : "bad CRC"))"
        }
        let rms = { (samples: [Int8]) in level(WaveformAnalysis.rms(samples.map(PlayedWaveform.level))) }
        return " | haptics #\(packet.counter) left=\(rms(left)) right=\(rms(right))"
    }

    static func level(_ value: Double) -> String {
        let thousandths = Int((value * 1000).rounded())
        let fraction = String(thousandths % 1000)
        return "\(thousandths / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
    }
}
