import AHAPFiles
import ArgumentParser
import AudioRendering
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HapticRendering
import LinuxAudio
import LinuxHaptics
import AppHaptics
import LinuxInput
@_spi(Internals) import LinuxSystem

struct RenderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Show what a pattern does to the motors: the timeline and the device commands, without a device.",
        discussion: """
            text draws both motor levels in the terminal; csv writes time,strong,weak rows (seconds, 0...1) at \
            --sample-rate; json writes the timeline segments and the device commands; svg plots the input \
            intensity and sharpness above the strong/weak output. With --actuators hd the output is a DualSense's \
            voice coils instead: svg plots their waveform and each carrier's frequency over time, csv (the \
            default) writes time,left,right samples (-1...1) at 3000 Hz, and wav writes them as a 16-bit stereo WAV \
            (--output). With --actuators hd-rumble the output is a Switch controller's HD rumble: svg plots each \
            band's frequency and amplitude at every 30 ms update, csv (the default) writes one row per update with \
            both bands of both actuators. A pattern's audio events are listed (text, json) and drawn in a panel of \
            their own (svg): each voice's volume envelope over its time; AudioCustom files are looked for next to \
            the pattern, then in Haptics/, for their length.
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable { case text, csv, json, svg, wav }

    @Argument(help: "An AHAP file, or the NAME of a pattern in Haptics/, as `haptics play` takes it.")
    var pattern: String

    @Option(
        help: ArgumentHelp(
            "Output format: text (the default), csv, json or svg; with --actuators hd, csv (the default), svg or "
                + "wav; with hd-rumble, csv (the default) or svg."))
    var format: Format?

    /// The format asked for, or the default for what is shown: the motors draw in the terminal; the voice coils'
    /// and the HD rumble's outputs have no terminal drawing, and write their samples or updates as csv.
    var chosenFormat: Format { format ?? (actuators == .rumble ? .text : .csv) }

    /// What the rendering shows: the motors, a DualSense's voice coils, or a Switch controller's HD rumble.
    enum Actuators: String, ExpressibleByArgument, CaseIterable {
        case rumble, hd
        case hdRumble = "hd-rumble"
    }

    @Option(
        help: ArgumentHelp(
            "rumble: the motors' levels (default); hd: a DualSense's voice coils, as waveforms at 3000 Hz; "
                + "hd-rumble: a Switch controller's HD rumble, two bands per actuator every 30 ms.",
            valueName: "rumble|hd|hd-rumble"))
    var actuators = Actuators.rumble

    @Option(help: "Write to this file instead of standard output.")
    var output: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Rows per second, up to 100000: csv's samples (default 1000), text's rows (default 50). Not with "
                + "--actuators hd or hd-rumble, which keep their own rate, nor with json or svg, which do not "
                + "sample."))
    var sampleRate: Double?

    @Option(help: "The render profile: how transients and commands are shaped for a kind of device.")
    var profile = RenderProfile.genericRumble

    @Option(help: ArgumentHelp(HapticLocality.help))
    var locality = HapticLocality.all

    func validate() throws {
        if let sampleRate, !(sampleRate > 0 && sampleRate <= 100_000) {
            throw ValidationError("--sample-rate must be more than 0 and at most 100000 Hz")
        }
        try OutputFile.check(output, writtenBy: "--output")
        switch (actuators, chosenFormat) {
        case (.hdRumble, .text), (.hdRumble, .json), (.hdRumble, .wav):
            throw ValidationError("--actuators hd-rumble renders as svg or csv")
        case (.rumble, .wav):
            throw ValidationError("--format wav is the voice coils' waveform: pass --actuators hd")
        case (.hd, .text), (.hd, .json):
            throw ValidationError("--actuators hd renders as svg, csv or wav")
        case (.hd, .wav) where output == nil:
            throw ValidationError("--format wav needs --output FILE")
        case (.hd, .wav):
            // A WAV file is finished by going back to its header: a pipe or a device cannot take it, and opening
            // a FIFO would wait for a reader first (until 6 December, then failed).
            if let output, let why = DocumentFile.notRegular(output) {
                throw ValidationError("--format wav writes a regular file, and \(output.shownInMessage) is not: \(why)")
            }
        default:
            break
        }
        // An option that would change nothing is refused rather than ignored.
        guard sampleRate != nil else { return }
        switch (actuators, chosenFormat) {
        case (.hdRumble, _):
            throw ValidationError("--actuators hd-rumble writes one row per 30 ms update: leave --sample-rate out")
        case (.hd, _):
            throw ValidationError("--actuators hd samples at the voice coils' 3000 Hz: leave --sample-rate out")
        case (_, .json), (_, .svg):
            throw ValidationError(
                "--format \(chosenFormat.rawValue) does not sample: --sample-rate is for text and csv")
        default:
            break
        }
    }

    func run() throws {
        let url = try PatternArgument.locate(self.pattern, command: "render")
        // A path is named as given (the locator keeps it relative to the working directory); a pattern found by
        // its name, by the file it was found in.
        let file = url.relativePath
        let pattern: HapticPattern
        do {
            pattern = try HapticPattern(contentsOf: url)
        } catch {
            throw CommandFailure(
                "cannot load \(file)", why: "\(error)", fix: PatternArgument.loadFix(for: error, path: file))
        }
        let folder = url.deletingLastPathComponent().path
        let sounds = PatternSounds(
            pattern: pattern,
            directories: [folder] + (HapticResourceDirectory.locate().map { [$0.directory.path] } ?? []),
            sampleRate: AudioOutputs.defaultSampleRate)
        let rendering = Rendering(
            pattern: pattern, profile: profile, locality: locality,
            audio: AudioSchedule(pattern: pattern, clipDurations: sounds.clipDurations),
            soundFailures: sounds.failures.mapValues(\.reason), voiceCoils: actuators == .hd,
            hdRumble: actuators == .hdRumble)
        let text: String
        switch chosenFormat {
        case .text: text = rendering.terminalText(rowsPerSecond: try rowRate(default: 50, of: rendering))
        case .csv:
            if let voiceCoils = rendering.voiceCoils {
                try checkRows(voiceCoils.endFrame, of: "the voice coils' samples at 3000 Hz")
                text = rendering.waveformCSV()
            } else if rendering.hdRumble != nil {
                // One row per 30 ms: an hour-long pattern is 120,000 rows.
                text = rendering.bandsCSV()
            } else {
                text = rendering.csv(sampleRate: try rowRate(default: 1000, of: rendering))
            }
        case .json: text = try rendering.json(file: file)
        case .svg: text = rendering.svg(title: URL(fileURLWithPath: file).lastPathComponent)
        case .wav:
            try writeWAV(rendering)
            return
        }
        if let output {
            do {
                try Sys.writeNewFile(output, Array(text.utf8))
            } catch {
                throw CommandFailure(
                    "cannot write \(output)", why: "\(error)",
                    fix: "Name a file in a folder that exists and that you may write.")
            }
        } else {
            print(text, terminator: "")
        }
    }

    /// The voice coils' waveform as a 16-bit stereo WAV at 3000 Hz, written a second at a time.
    private func writeWAV(_ rendering: Rendering) throws {
        guard let output, let voiceCoils = rendering.voiceCoils else { return }
        var blocks = Rendering.blocks(of: voiceCoils).makeIterator()
        do {
            try AudioFile.write(to: output, format: .wav16, sampleRate: voiceCoils.sampleRate, channelCount: 2) {
                blocks.next().map { $0.frames.interleaved.map { Float($0) } }
            }
        } catch {
            throw CommandFailure(
                "cannot write \(output)", why: "\(error)",
                fix: "Name a file in a folder that exists and that you may write.")
        }
    }

    /// The most rows text and csv write: a million rows is about 30 MB of csv, and an hour-long pattern
    /// (`HapticPattern.maximumTime`) at the default 1000 Hz would be 3.6 million.
    static let maximumRows = 1_000_000.0

    /// Fails when the voice coils' csv, one row per sample at their own 3000 Hz, would have more than
    /// `maximumRows` rows (a pattern over 333 s): `rows`, of `what`.
    private func checkRows(_ rows: Int, of what: String) throws {
        guard Double(rows) > Self.maximumRows else { return }
        throw CommandFailure(
            "\(pattern): too long to write as csv",
            why: "\(what) are \(rows) rows, more than \(Int(Self.maximumRows))",
            fix: "Pass --format wav --output FILE, which holds the same samples in 4 bytes each, or --format svg.")
    }

    /// `--sample-rate`, or `defaultRate`, when the rows it gives over the rendering fit in `maximumRows`.
    private func rowRate(default defaultRate: Double, of rendering: Rendering) throws -> Double {
        let rate = sampleRate ?? defaultRate
        let rows = (rendering.span * rate).rounded(.up) + 1
        guard rows > Self.maximumRows else { return rate }
        let fitting = ((Self.maximumRows - 1) / rendering.span).rounded(.down)
        throw CommandFailure(
            "\(pattern): too long to sample at \(decimal(rate)) Hz",
            why:
                "\(decimal(rendering.span)) s at \(decimal(rate)) Hz is \(Int(rows)) rows, more than \(Int(Self.maximumRows))",
            fix: "Pass --sample-rate \(decimal(fitting)) or less, or --format json or svg, which do not sample.")
    }
}

/// One pattern rendered for one profile, and its presentations.
struct Rendering {
    let pattern: HapticPattern
    let profile: RenderProfile
    let timeline: MotorTimeline
    let envelope: MotorTimeline
    let commands: [RumbleCommand]
    /// The pattern's audio events as voices; those whose file was not found are in `missingClips`.
    let audio: AudioSchedule
    /// Why each missing clip has no sound (`PatternSounds.failures`: not found, not decodable, not a regular file),
    /// by path; a path without one reads as not found.
    let soundFailures: [String: String]

    /// The voice coils' renderer, when the output shown is a DualSense's voice coils rather than its motors.
    let voiceCoils: WaveformRenderer?
    /// HD rumble's renderer, when the output shown is a Switch controller's HD rumble.
    let hdRumble: BandRenderer?

    init(
        pattern: HapticPattern, profile: RenderProfile, locality: HapticLocality, audio: AudioSchedule? = nil,
        soundFailures: [String: String] = [:], voiceCoils: Bool = false, hdRumble: Bool = false
    ) {
        self.pattern = pattern
        self.profile = profile
        self.audio = audio ?? AudioSchedule(pattern: pattern)
        self.soundFailures = soundFailures
        let renderer = PatternRenderer(profile: profile, locality: locality)
        timeline = renderer.render(pattern)
        envelope = renderer.intensityEnvelope(pattern)
        commands = DeviceCommandPlanner(profile: profile).commands(for: timeline)
        self.voiceCoils =
            voiceCoils
            ? WaveformRenderer(
                pattern: pattern, sampleRate: Double(DualSenseHapticsReport.sampleRate), locality: locality) : nil
        self.hdRumble = hdRumble ? BandRenderer(pattern: pattern, locality: locality) : nil
    }

    /// Plotted and sampled up to here: the output's end, and at least the pattern's length.
    var span: Double {
        let waveformEnd =
            voiceCoils.map { Double($0.endFrame) / $0.sampleRate }
            ?? hdRumble.map { Double($0.endFrame) / BandRenderer.sampleRate } ?? 0
        return Swift.max(timeline.endTime, pattern.duration, commands.last?.time ?? 0, audio.end, waveformEnd)
    }

    /// What a voice plays: "tone", or its file as the pattern names it.
    static func label(_ voice: AudioVoice) -> String {
        switch voice.source {
        case .tone: "tone"
        case .clip(let waveform): waveform.description
        }
    }

    /// Why the missing clip `waveform` is silent.
    func missingReason(_ waveform: AudioWaveform) -> String {
        switch waveform {
        case .path(let path): soundFailures[path] ?? "file not found"
        case .resource: "an ID a running engine gives a registered file, which a file cannot name"
        }
    }

    /// One line per audio voice, and one per file without a sound. A file's name comes from the pattern: one
    /// holding a hidden character (a line break, a terminal's escape sequence) is shown quoted with it escaped, so
    /// that it cannot forge or erase a line.
    var audioLines: [String] {
        audio.voices.map {
            "  audio \(decimal($0.start))-\(decimal($0.end)) s  \(Self.label($0).shownInMessage)  "
                + "volume \(decimal($0.volume)) pan \(decimal($0.pan)) pitch \(decimal($0.pitch)) "
                + "brightness \(decimal($0.brightness))" + ($0.loops ? " looping" : "")
        } + audio.missingClips.map { "  audio \($0.description.shownInMessage): \(missingReason($0)), silent" }
    }

    func csv(sampleRate: Double) -> String {
        var text = "time,strong,weak\n"
        let count = Int((span * sampleRate).rounded(.up)) + 1
        for index in 0..<count {
            let time = Double(index) / sampleRate
            let levels = timeline.levels(at: time)
            text += "\(decimal(time)),\(decimal(levels.strong)),\(decimal(levels.weak))\n"
        }
        return text
    }

    func terminalText(rowsPerSecond: Double) -> String {
        let width = 30
        let bar = { (level: Double) -> String in
            let filled = Int((level * Double(width)).rounded())
            return String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
        }
        var text =
            "\(profile.name): \(commands.count) commands over \(decimal(span)) s (ends \(decimal(timeline.endTime)) s)\n"
        for line in audioLines { text += line + "\n" }
        text += "  time s  |strong\(String(repeating: " ", count: width - 6))|weak\n"
        let count = Int((span * rowsPerSecond).rounded(.up)) + 1
        for index in 0..<count {
            let time = Double(index) / rowsPerSecond
            let levels = timeline.levels(at: time)
            text += String(cFormat: "%8.3f  |", time) + bar(levels.strong) + "|" + bar(levels.weak) + "|\n"
        }
        return text
    }

    func json(file: String) throws -> String {
        let segments: [JSONValue] = timeline.segments.map {
            object([
                "start": number($0.start), "end": number($0.end),
                "strong": .array([number($0.startLevels.strong), number($0.endLevels.strong)]),
                "weak": .array([number($0.startLevels.weak), number($0.endLevels.weak)]),
            ])
        }
        let commandList: [JSONValue] = commands.map {
            object([
                "time": number($0.time), "strong": number($0.levels.strong), "weak": number($0.levels.weak),
                "strongMagnitude": .number(Double(ForceFeedbackEffect.magnitude($0.levels.strong))),
                "weakMagnitude": .number(Double(ForceFeedbackEffect.magnitude($0.levels.weak))),
                "hold": $0.holdDuration.map(number) ?? .null,
            ])
        }
        let program = NativePeriodicProgram(pattern: pattern, profile: profile)
        let effects: [JSONValue] = program.effects.map {
            object([
                // In pattern time, whole: a device is sent each effect from its start with no delay, in pieces of
                // at most 0x7fff ms (`PeriodicSourceCursor`), so these are not clamped to its field.
                "delayMs": .number(($0.delay * 1000).rounded()), "lengthMs": .number(($0.length * 1000).rounded()),
                "periodMs": .number(Double($0.periodMilliseconds)), "magnitude": .number(Double($0.magnitudeUnits)),
                "attackLengthMs": .number(Double($0.attackLengthMilliseconds)),
                "attackLevel": .number(Double($0.attackLevelUnits)),
                "fadeLengthMs": .number(Double($0.fadeLengthMilliseconds)),
                "fadeLevel": .number(Double($0.fadeLevelUnits)),
            ])
        }
        let voices: [JSONValue] = audio.voices.map {
            object([
                "event": .number(Double($0.eventIndex)), "source": .string(Self.label($0)), "start": number($0.start),
                "end": number($0.end), "volume": number($0.volume), "pan": number($0.pan), "pitch": number($0.pitch),
                "brightness": number($0.brightness), "loops": .bool($0.loops),
            ])
        }
        let root = object([
            "file": .string(file), "profile": .string(profile.name), "patternDuration": number(pattern.duration),
            "endTime": number(timeline.endTime), "timeline": .array(segments), "commands": .array(commandList),
            "nativePeriodic": object([
                "exact": .bool(program.isExact),
                "inexactEvents": .array(program.inexactEvents.map { .number(Double($0)) }),
                "effects": .array(effects),
            ]),
            "audio": object([
                "voices": .array(voices), "missingFiles": .array(audio.missingClips.map { .string($0.description) }),
                "missingReasons": object(
                    Dictionary(audio.missingClips.map { ($0.description, .string(missingReason($0))) }) { first, _ in
                        first
                    }),
                "end": number(audio.end),
            ]),
        ])
        do {
            return String(decoding: try JSONWriter.encode(root, prettyPrinted: true), as: UTF8.self)
        } catch {
            throw CommandFailure(
                "cannot write the rendering as JSON", why: "a value at \(error.path) is not a finite number",
                fix: "Check the pattern with `haptics validate`.")
        }
    }

    // MARK: SVG

    /// Where things go on the SVG plot: two panels (input above, output below) over the same time axis, and a
    /// third, audio, below them for a pattern with audio events.
    struct PlotFrame {
        let width = 960.0
        let left = 60.0
        let panelHeight = 160.0
        let inputTop = 40.0
        let duration: Double
        var hasAudio = false

        var plotWidth: Double { width - left - 20 }
        var outputTop: Double { inputTop + panelHeight + 50 }
        var audioTop: Double { outputTop + panelHeight + 50 }
        /// The lowest panel's top: the time ticks go under it.
        var bottomTop: Double { hasAudio ? audioTop : outputTop }
        var height: Double { bottomTop + panelHeight + 40 }

        func x(_ time: Double) -> Double { left + plotWidth * time / duration }
        func y(_ level: Double, top: Double) -> Double { top + panelHeight * (1 - level) }
    }

    func svg(title: String) -> String {
        let hasAudio = !audio.voices.isEmpty || !audio.missingClips.isEmpty
        let frame = PlotFrame(duration: Swift.max(span, 0.001), hasAudio: hasAudio)
        let output =
            voiceCoils.map { svgVoiceCoils($0, frame) } ?? hdRumble.map { svgHDRumble($0, frame) } ?? svgOutput(frame)
        let body = svgAxes(frame) + svgInput(frame) + output + (hasAudio ? svgAudio(frame) : "")
        let subtitle =
            voiceCoils != nil
            ? "voice coils, \(DualSenseHapticsReport.sampleRate) Hz"
            : hdRumble != nil
                ? "HD rumble, an update every \(Int(HDRumbleStream.updateSeconds * 1000)) ms"
                : "profile \(profile.name), \(commands.count) commands"
        return """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(f(frame.width))" height="\(f(frame.height))" viewBox="0 0 \(f(frame.width)) \(f(frame.height))" font-family="sans-serif">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(f(frame.left))" y="18" font-size="15" font-weight="bold">\(escape(title)) — \(subtitle)</text>
            \(body)</svg>

            """
    }

    /// Both panels with their titles and level labels, and the time ticks across them.
    private func svgAxes(_ frame: PlotFrame) -> String {
        var body = ""
        var panels = [
            (frame.inputTop, "input: intensity envelope (black), intensity control (dashed), event sharpness (purple)"),
            voiceCoils != nil
                ? (
                    frame.outputTop,
                    "voice coils: waveform (grey, both actuators), carrier frequency (orange, log scale, right axis)"
                )
                : hdRumble != nil
                    ? (
                        frame.outputTop,
                        "HD rumble, left actuator: low band (red), high band (blue), frequency on a log scale (right "
                            + "axis), dot size its amplitude"
                    )
                    : (frame.outputTop, "output: strong (red), weak (blue); device commands (steps)"),
        ]
        if frame.hasAudio {
            panels.append((frame.audioTop, "audio: each voice's volume envelope (green), its file or tone"))
        }
        for (top, label) in panels {
            body +=
                "<rect x=\"\(f(frame.left))\" y=\"\(f(top))\" width=\"\(f(frame.plotWidth))\" height=\"\(f(frame.panelHeight))\" fill=\"#fafafa\" stroke=\"#999\"/>\n"
            body += "<text x=\"\(f(frame.left))\" y=\"\(f(top - 6))\" font-size=\"13\">\(label)</text>\n"
            // The waveform is drawn around the middle of its panel: -1 at 5 %, 1 at 95 % of its height.
            let levels =
                voiceCoils != nil && top == frame.outputTop
                ? [(0.05, "-1"), (0.5, "0"), (0.95, "1")]
                : hdRumble != nil && top == frame.outputTop ? [] : [(0.0, "0.0"), (0.5, "0.5"), (1.0, "1.0")]
            for (level, text) in levels {
                body +=
                    "<text x=\"\(f(frame.left - 8))\" y=\"\(f(frame.y(level, top: top) + 4))\" font-size=\"11\" text-anchor=\"end\">\(text)</text>\n"
            }
        }
        for tick in niceTicks(frame.duration) {
            let x = f(frame.x(tick))
            body +=
                "<text x=\"\(x)\" y=\"\(f(frame.bottomTop + frame.panelHeight + 16))\" font-size=\"11\" text-anchor=\"middle\">\(decimal(tick)) s</text>\n"
            body +=
                "<line x1=\"\(x)\" y1=\"\(f(frame.inputTop))\" x2=\"\(x)\" y2=\"\(f(frame.bottomTop + frame.panelHeight))\" stroke=\"#ddd\" stroke-dasharray=\"2,3\"/>\n"
        }
        return body
    }

    /// The input panel: the intensity envelope as rendered, each event's sharpness (with the sharpness
    /// control), and the intensity control when the pattern has one.
    private func svgInput(_ frame: PlotFrame) -> String {
        let y = { (level: Double) in frame.y(level, top: frame.inputTop) }
        var body = polyline(timeline: envelope, motor: \.strong, color: "#000", x: frame.x, y: y, width: 1.5)
        let controls = PatternControls(pattern: pattern)
        for event in pattern.events where event.isHaptic {
            let start = event.relativeTime
            let sharpness = { (time: Double) in y(controls.sharpness(of: event, at: time)) }
            if event.type == .hapticTransient {
                body += "<circle cx=\"\(f(frame.x(start)))\" cy=\"\(f(sharpness(start)))\" r=\"3\" fill=\"#8e44ad\"/>\n"
            } else {
                let end = start + event.effectiveDuration
                body += sampledPolyline(
                    from: start, to: end, count: 64, frame: frame, level: sharpness,
                    attributes: "fill=\"none\" stroke=\"#8e44ad\" stroke-width=\"2\"")
            }
        }
        if pattern.parameterCurves.contains(where: { $0.parameterID == .hapticIntensityControl })
            || pattern.dynamicParameters.contains(where: { $0.parameterID == .hapticIntensityControl })
        {
            body += sampledPolyline(
                from: 0, to: frame.duration, count: 400, frame: frame,
                level: { y(controls.value(of: .hapticIntensityControl, at: $0)) },
                attributes: "fill=\"none\" stroke=\"#777\" stroke-dasharray=\"4,3\"")
        }
        return body
    }

    /// The output panel: the exact timeline (thin) and the commands the device receives (steps).
    private func svgOutput(_ frame: PlotFrame) -> String {
        let y = { (level: Double) in frame.y(level, top: frame.outputTop) }
        return polyline(timeline: timeline, motor: \.strong, color: "#c0392b", x: frame.x, y: y, width: 1, opacity: 0.5)
            + polyline(timeline: timeline, motor: \.weak, color: "#2980b9", x: frame.x, y: y, width: 1, opacity: 0.5)
            + steps(\.strong, color: "#c0392b", x: frame.x, y: y)
            + steps(\.weak, color: "#2980b9", x: frame.x, y: y)
    }

    /// The voice-coil panel: the waveform's extent per pixel column (both actuators) around the middle, and the
    /// frequency of each sounding carrier over time on a logarithmic scale from 40 to 400 Hz (a dot's size is its
    /// amplitude).
    private func svgVoiceCoils(_ renderer: WaveformRenderer, _ frame: PlotFrame) -> String {
        let top = frame.outputTop
        let rate = renderer.sampleRate
        let columns = Int(frame.plotWidth)
        // Column c spans frames bounds[c] ..< bounds[c + 1].
        let bounds = (0...columns).map { Int(Double($0) / Double(columns) * frame.duration * rate) }
        var highs = [Double](repeating: 0, count: columns)
        var lows = [Double](repeating: 0, count: columns)
        var column = 0
        for (first, block) in Self.blocks(of: renderer) {
            for offset in 0..<block.count {
                let index = first + offset
                while column < columns, index >= bounds[column + 1] { column += 1 }
                guard column < columns, index >= bounds[column] else { continue }
                highs[column] = Swift.max(highs[column], block.left[offset], block.right[offset])
                lows[column] = Swift.min(lows[column], block.left[offset], block.right[offset])
            }
        }
        var upper: [String] = []
        var lower: [String] = []
        for column in 0..<columns {
            let x = f(frame.left + Double(column) + 0.5)
            upper.append("\(x),\(f(frame.y(0.5 + 0.45 * highs[column], top: top)))")
            lower.append("\(x),\(f(frame.y(0.5 + 0.45 * lows[column], top: top)))")
        }
        var body =
            "<polygon points=\"\((upper + lower.reversed()).joined(separator: " "))\" fill=\"#bbb\" stroke=\"none\"/>\n"
        let lowest = 40.0, highest = 400.0
        let level = { (hertz: Double) in
            PureMath.log2(hertz / lowest) / PureMath.log2(highest / lowest)
        }
        for hertz in [50.0, 100, 200, 300] {
            let y = f(frame.y(level(hertz), top: top))
            body +=
                "<text x=\"\(f(frame.x(frame.duration) + 4))\" y=\"\(y)\" font-size=\"10\" fill=\"#d35400\">\(Int(hertz))</text>\n"
        }
        let samples = 600
        for index in 0...samples {
            let time = frame.duration * Double(index) / Double(samples)
            for carrier in renderer.carriers(at: Int((time * rate).rounded())) where carrier.amplitude > 0.01 {
                body +=
                    "<circle cx=\"\(f(frame.x(time)))\" cy=\"\(f(frame.y(level(carrier.frequency), top: top)))\" r=\"\(f(0.6 + 1.6 * carrier.amplitude))\" fill=\"#d35400\"/>\n"
            }
        }
        return body
    }

    /// The HD rumble panel: at every update, each band of the left actuator as a dot at its frequency (a
    /// logarithmic scale from 60 to 800 Hz) whose size is its amplitude; the band renderer's crossover dashed.
    private func svgHDRumble(_ renderer: BandRenderer, _ frame: PlotFrame) -> String {
        let top = frame.outputTop
        let lowest = 60.0, highest = 800.0
        let level = { (hertz: Double) in PureMath.log2(hertz / lowest) / PureMath.log2(highest / lowest) }
        var body = ""
        for hertz in [80.0, 160, 320, 640] {
            let y = f(frame.y(level(hertz), top: top))
            body +=
                "<text x=\"\(f(frame.x(frame.duration) + 4))\" y=\"\(y)\" font-size=\"10\">\(Int(hertz))</text>\n"
        }
        let crossover = f(frame.y(level(renderer.crossover), top: top))
        body +=
            "<line x1=\"\(f(frame.left))\" y1=\"\(crossover)\" x2=\"\(f(frame.x(frame.duration)))\" y2=\"\(crossover)\" stroke=\"#999\" stroke-dasharray=\"4,3\"/>\n"
        for update in updates(renderer) {
            for (band, color) in [(update.left.low, "#c0392b"), (update.left.high, "#2980b9")]
            where band.amplitude > 0.01 {
                body +=
                    "<circle cx=\"\(f(frame.x(update.time)))\" cy=\"\(f(frame.y(level(band.frequency), top: top)))\" r=\"\(f(1 + 3 * band.amplitude))\" fill=\"\(color)\"/>\n"
            }
        }
        return body
    }

    /// What the HD rumble stream writes for the pattern played alone from its start: one update every 30 ms.
    func updates(_ renderer: BandRenderer) -> [(time: Double, left: ActuatorBands, right: ActuatorBands)] {
        let frames = Int(HDRumbleStream.updateSeconds * BandRenderer.sampleRate)
        return stride(from: 0, to: renderer.endFrame + frames, by: frames).map { frame in
            let bands = renderer.bands(from: frame, count: frames)
            return (Double(frame) / BandRenderer.sampleRate, bands.left, bands.right)
        }
    }

    /// HD rumble as rows, one per update: the time, then each actuator's low and high band (Hz, amplitude 0...1).
    func bandsCSV() -> String {
        guard let hdRumble else { return "" }
        var text =
            "time,leftLowHz,leftLowAmplitude,leftHighHz,leftHighAmplitude,"
            + "rightLowHz,rightLowAmplitude,rightHighHz,rightHighAmplitude\n"
        for update in updates(hdRumble) {
            let bands = [update.left.low, update.left.high, update.right.low, update.right.high]
            text +=
                decimal(round6(update.time)) + ","
                + bands.map { "\(decimal(round6($0.frequency))),\(decimal(round6($0.amplitude)))" }.joined(
                    separator: ",")
                + "\n"
        }
        return text
    }

    /// The voice coils' samples as `time,left,right` rows (seconds, -1...1), one per frame at 3000 Hz.
    func waveformCSV() -> String {
        guard let voiceCoils else { return "" }
        var text = "time,left,right\n"
        for (first, block) in Self.blocks(of: voiceCoils) {
            for offset in 0..<block.count {
                text +=
                    "\(decimal(Double(first + offset) / voiceCoils.sampleRate)),\(decimal(round6(block.left[offset]))),"
                    + "\(decimal(round6(block.right[offset])))\n"
            }
        }
        return text
    }

    /// The waveform of `renderer` from its first frame to its end, limited as the stream limits it
    /// (`ActuatorFrames.mixed`), a second at a time, each block with the index of its first frame: csv, wav and
    /// svg show what the voice coils get without holding all of it (an hour is 10.8 million frames, which took
    /// 350 MB held at once).
    static func blocks(of renderer: WaveformRenderer) -> some Sequence<(first: Int, frames: ActuatorFrames)> {
        let blockFrames = 3000
        return sequence(state: (cursor: renderer.cursor(at: 0), first: 0)) { state in
            guard state.first < renderer.endFrame else { return nil }
            let first = state.first
            let count = Swift.min(blockFrames, renderer.endFrame - first)
            state.first += count
            return (first, ActuatorFrames.mixed([state.cursor.render(count: count)]))
        }
    }

    /// The audio panel: each voice's volume envelope (the event's volume times its attack, decay and release)
    /// over its time span, labelled with its file or "tone"; a file not found is named in red.
    private func svgAudio(_ frame: PlotFrame) -> String {
        let y = { (level: Double) in frame.y(level, top: frame.audioTop) }
        var body = ""
        for voice in audio.voices {
            // The envelope closed down to 0 at both ends, filled: a sound is an area over its time.
            let samples = 64
            var points = ["\(f(frame.x(voice.start))),\(f(y(0)))"]
            for index in 0...samples {
                let time = voice.start + (voice.end - voice.start) * Double(index) / Double(samples)
                let gain = voice.volume * voice.gain(at: Swift.min(time, voice.end - 1e-9))
                points.append("\(f(frame.x(time))),\(f(y(gain)))")
            }
            points.append("\(f(frame.x(voice.end))),\(f(y(0)))")
            body +=
                "<polygon points=\"\(points.joined(separator: " "))\" fill=\"#27ae60\" fill-opacity=\"0.15\" stroke=\"#27ae60\" stroke-width=\"1.5\"/>\n"
            body +=
                "<text x=\"\(f(frame.x(voice.start) + 3))\" y=\"\(f(y(voice.volume) - 4))\" font-size=\"11\" fill=\"#1e8449\">\(escape(Self.label(voice)))</text>\n"
        }
        // Files not found, listed from the panel's foot upwards.
        for (index, waveform) in audio.missingClips.enumerated() {
            let line = frame.audioTop + frame.panelHeight - 6 - 14 * Double(index)
            body +=
                "<text x=\"\(f(frame.x(frame.duration) - 6))\" y=\"\(f(line))\" font-size=\"11\" fill=\"#c0392b\" text-anchor=\"end\">\(escape(waveform.description)): \(escape(missingReason(waveform))), silent</text>\n"
        }
        return body
    }

    /// A curve sampled at `count + 1` evenly spaced times from `start` to `end`; `level` gives its y.
    private func sampledPolyline(
        from start: Double, to end: Double, count: Int, frame: PlotFrame, level: (Double) -> Double,
        attributes: String
    ) -> String {
        let coordinates = (0...count).map { index in
            let time = start + (end - start) * Double(index) / Double(count)
            return "\(f(frame.x(time))),\(f(level(time)))"
        }
        return "<polyline points=\"\(coordinates.joined(separator: " "))\" \(attributes)/>\n"
    }

    private func polyline(
        timeline: MotorTimeline, motor: KeyPath<MotorMagnitudes, Double>, color: String, x: (Double) -> Double,
        y: (Double) -> Double, width: Double, opacity: Double = 1
    ) -> String {
        var points: [String] = []
        for segment in timeline.segments {
            points.append("\(f(x(segment.start))),\(f(y(segment.startLevels[keyPath: motor])))")
            points.append("\(f(x(segment.end))),\(f(y(segment.endLevels[keyPath: motor])))")
        }
        points.append("\(f(x(timeline.endTime))),\(f(y(0)))")
        return
            "<polyline points=\"\(points.joined(separator: " "))\" fill=\"none\" stroke=\"\(color)\" stroke-width=\"\(width)\" stroke-opacity=\"\(opacity)\"/>\n"
    }

    private func steps(
        _ motor: KeyPath<MotorMagnitudes, Double>, color: String, x: (Double) -> Double, y: (Double) -> Double
    ) -> String {
        var points = ["\(f(x(0))),\(f(y(0)))"]
        var level = 0.0
        for command in commands {
            points.append("\(f(x(command.time))),\(f(y(level)))")
            level = command.levels[keyPath: motor]
            points.append("\(f(x(command.time))),\(f(y(level)))")
        }
        points.append("\(f(x(span))),\(f(y(level)))")
        return
            "<polyline points=\"\(points.joined(separator: " "))\" fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\"/>\n"
    }

    private func niceTicks(_ duration: Double) -> [Double] {
        let steps = [0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5, 1, 2, 5, 10, 20, 30]
        let step = steps.first { duration / $0 <= 10 } ?? 60
        return stride(from: 0, through: duration, by: step).map { $0 }
    }
}

/// A coordinate with one decimal. Written by hand: printf-style formatting (`String(format:)` when measured) took
/// most of the time of an SVG with a hundred thousand events (it is kept for values an `Int` cannot hold).
private func f(_ value: Double) -> String {
    let tenths = (value * 10).rounded()
    guard tenths.magnitude < 1e15 else { return String(cFormat: "%.1f", value) }
    let whole = Int(tenths)
    return "\(whole < 0 ? "-" : "")\(whole.magnitude / 10).\(whole.magnitude % 10)"
}
private func round6(_ value: Double) -> Double { (value * 1e6).rounded() / 1e6 }
/// A value of render's JSON, rounded to the microsecond (or millionth) it is meaningful to.
private func number(_ value: Double) -> JSONValue { .number(round6(value)) }
/// A JSON object with its keys in order, so the output is the same from run to run.
private func object(_ members: [String: JSONValue]) -> JSONValue {
    .object(members.sorted { $0.key < $1.key }.map { JSONMember(key: $0.key, value: $0.value) })
}
private func decimal(_ value: Double) -> String {
    var text = String(cFormat: "%.6f", value)
    while text.hasSuffix("0") { text.removeLast() }
    if text.hasSuffix(".") { text.removeLast() }
    return text
}
/// `text` as SVG text: a hidden character (XML forbids control characters, and the others would hide or reorder
/// what follows) makes it shown quoted with that character escaped, as messages show it, then `&` and `<` are
/// escaped for XML.
private func escape(_ text: String) -> String {
    text.shownInMessage.replacing("&", with: "&amp;").replacing("<", with: "&lt;")
}
