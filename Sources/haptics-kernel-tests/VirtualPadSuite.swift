// The virtual pad against the real kernel: what clients (evtest, fftest, a raw client, our CLI) see of it,
// and what it records of them.
import HapticRendering
import HapticTestDevices
import CLinuxInput
import Glibc
import LinuxInput
import Logging

enum VirtualPadSuite {
    static let suite: KernelTestSuite = KernelTestSuite(
        name: "virtual-pad", requires: [.uinput],
        tests: evtestCases + [
            KernelTest(name: "virtual-pad/fftest-uploads-and-plays-are-recorded", body: fftestIsRecorded),
            KernelTest(name: "virtual-pad/destroy-makes-client-write-fail-enodev", body: destroyGivesENODEV),
            KernelTest(name: "virtual-pad/fail-uploads-after-2/library", body: failUploadsThroughLibrary),
            KernelTest(name: "virtual-pad/fail-uploads-after-2/cli", body: failUploadsThroughCLI),
            KernelTest(
                name: "virtual-pad/refusing-pad/playing-commands-say-why", body: playingCommandsSayWhyThePadRefused),
            KernelTest(name: "virtual-pad/cli-sigterm-removes-node", body: sigtermRemovesNode),
            KernelTest(name: "virtual-pad/cli-live-levels-on-terminal", body: cliShowsLiveLevelsOnATerminal),
            KernelTest(name: "virtual-pad/udev-tags-it-a-joystick", body: udevTagsAJoystick),
            KernelTest(name: "virtual-pad/unfiltered-ff-events-reach-the-pad", body: unfilteredEventsReachThePad),
            KernelTest(name: "virtual-pad/record-timestamps-monotonic-clock", body: timestampsAreMonotonic),
            KernelTest(name: "virtual-pad/record-file-matches-memory", body: recordFileMatchesMemory),
            KernelTest(name: "virtual-pad/stream-without-retained-records", body: streamWithoutRetainedRecords),
            KernelTest(name: "virtual-pad/motor-model-follows-raw-client", body: motorModelFollowsClient),
            KernelTest(name: "virtual-pad/no-descriptor-leak", body: noDescriptorLeak),
            KernelTest(
                name: "virtual-pad/200-updates-of-one-effect-reach-the-pad-in-order-as-replacements",
                body: updatesOfOneEffect),
        ])

    static func logger() -> Logger {
        var logger = Logger(label: "kernel-tests.virtual-pad")
        logger.logLevel = logLevel
        return logger
    }

    /// Warnings and worse, unless `HAPTICS_KERNEL_TESTS_LOG_LEVEL` names another level (`info` shows the engines'
    /// unplug, reset and re-open decisions, for a soak or replug run being looked into).
    static let logLevel: Logger.Level = {
        guard let name = getenv("HAPTICS_KERNEL_TESTS_LOG_LEVEL").map({ String(cString: $0) }) else { return .warning }
        return Logger.Level(rawValue: name) ?? .warning
    }()

    static func makePad(_ configuration: VirtualPadConfiguration = .init()) throws -> VirtualPad {
        do {
            return try VirtualPad(configuration, logger: logger())
        } catch {
            throw TestFailure(reason: "creating the pad: \(error)")
        }
    }

    /// Generous bound on waits for the pad's thread or a child process; only a hang reaches it.
    static let hangGuardSeconds = 30.0

    /// Waits until `condition` holds for the pad's records; fails naming `what` if the pad hangs.
    @discardableResult
    static func waitForRecords(
        _ pad: VirtualPad, _ what: String, until condition: @escaping @Sendable ([PadRecord]) -> Bool
    ) async throws -> [PadRecord] {
        let stream = pad.recordStream()
        if condition(pad.records()) { return pad.records() }
        let satisfied = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await _ in stream where condition(pad.records()) { return true }
                return condition(pad.records())
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(hangGuardSeconds))
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        let records = pad.records()
        try require(satisfied, "the pad never recorded \(what); it recorded: \(summary(records))")
        return records
    }

    /// The effects the pad still holds once its thread has had time to record the kernel's erases; nil when none.
    static func effectsLeft(on pad: VirtualPad) async -> [Int16]? {
        let deadline = monotonicSeconds() + VirtualPadSuite.hangGuardSeconds
        while !pad.uploadedEffects().isEmpty, monotonicSeconds() < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        let held = pad.uploadedEffects()
        return held.isEmpty ? nil : held.sorted()
    }

    static func summary(_ records: [PadRecord]) -> String {
        records.map { "\($0.event.rawValue)\($0.id.map { "#\($0)" } ?? "")" }.joined(separator: " ")
    }

    static func client(_ node: String) throws -> RawClient {
        try asClient { () throws(ClientError) in try RawClient(node: node) }
    }

    /// Runs raw-client calls that must succeed; an errno from them fails the test.
    static func asClient<T>(_ calls: () throws(ClientError) -> T) throws(TestFailure) -> T {
        do { return try calls() } catch { throw TestFailure(reason: "client: \(error)") }
    }

    // MARK: (a) evtest lists exactly the FF set

    static let evtestSets: [(label: String, features: Set<ForceFeedbackFeature>)] = [
        ("rumble-gain", [.rumble, .gain]),
        ("default", VirtualPadConfiguration.defaultFeatures),
        ("fftest-set", [.periodic, .sine, .constant, .spring, .damper, .gain, .autocenter]),
        ("constant-ramp", [.constant, .ramp]),
    ]

    static let evtestCases: [KernelTest] = evtestSets.map { set in
        KernelTest(name: "virtual-pad/evtest-lists-ff-set/\(set.label)") { try await evtestListsSet(set.features) }
    }

    /// ff-core's `input_ff_create` adds FF_RUMBLE to any device with FF_PERIODIC ("we can emulate RUMBLE with
    /// periodic effects"), so that bit is expected on top of what the pad asked for.
    static func expectedListing(_ features: Set<ForceFeedbackFeature>) -> Set<UInt16> {
        var codes = Set(features.map(\.rawValue))
        if features.contains(.periodic) { codes.insert(ForceFeedbackFeature.rumble.rawValue) }
        return codes
    }

    static func evtestListsSet(_ features: Set<ForceFeedbackFeature>) async throws {
        guard onPath("evtest") else { throw TestSkip(.evtest, "evtest is not installed (apt-get install evtest)") }
        let name = "Haptics evtest pad"
        let pad = try makePad(VirtualPadConfiguration(name: name, features: features))
        defer { pad.destroy() }
        let listing = try evtestListing(pad.eventNode)
        try require(
            listing.contains("Input device name: \"\(name)\""), "evtest shows another name:\n\(listing)")
        let listed = evtestCodes(listing, eventType: "EV_FF")
        try requireEqual(listed.sorted(), expectedListing(features).sorted(), "FF codes evtest lists")
        // Looks like a gamepad: BTN_SOUTH among the keys, the left stick among the axes.
        try require(evtestCodes(listing, eventType: "EV_KEY").contains(UInt16(BTN_SOUTH)), "no BTN_SOUTH in evtest")
        try require(evtestCodes(listing, eventType: "EV_ABS").contains(UInt16(ABS_X)), "no ABS_X in evtest")
    }

    /// evtest prints the device, then waits for events forever: read up to its "Testing" line, then stop it.
    static func evtestListing(_ node: String) throws -> String {
        let evtest = try Subprocess(["evtest", node], terminal: true)
        let complete = evtest.read(until: { $0.contains("Testing ... (interrupt to exit)") }, timeout: hangGuardSeconds)
        evtest.signal(SIGTERM)
        _ = evtest.finish(timeout: hangGuardSeconds)
        try require(complete, "evtest did not finish its listing:\n\(evtest.text)")
        return evtest.text
    }

    /// The codes under "Event type N (TYPE)" in evtest's listing.
    static func evtestCodes(_ listing: String, eventType: String) -> Set<UInt16> {
        var codes: Set<UInt16> = []
        var inSection = false
        // A pseudo-terminal ends lines with "\r\n", a single Character in Swift: split on any newline.
        for line in listing.split(whereSeparator: \.isNewline) {
            let trimmed = line.drop(while: { $0 == " " })
            if trimmed.hasPrefix("Event type ") {
                inSection = trimmed.contains("(\(eventType))")
            } else if inSection, trimmed.hasPrefix("Event code ") {
                let number = trimmed.dropFirst("Event code ".count).prefix(while: \.isNumber)
                if let code = UInt16(number) { codes.insert(code) }
            } else if !trimmed.hasPrefix("Value") && !trimmed.hasPrefix("Min") && !trimmed.hasPrefix("Max")
                && !trimmed.hasPrefix("Fuzz") && !trimmed.hasPrefix("Flat") && !trimmed.hasPrefix("Resolution")
            {
                inSection = false
            }
        }
        return codes
    }

    // MARK: (b) fftest, a client none of us wrote

    static func fftestIsRecorded() async throws {
        guard onPath("fftest") else { throw TestSkip(.fftest, "fftest is not installed (apt-get install joystick)") }
        // Every type fftest uploads, so that none is refused by the kernel before reaching the pad.
        let pad = try makePad(
            VirtualPadConfiguration(features: [.rumble, .periodic, .sine, .constant, .spring, .damper, .gain]))
        defer { pad.destroy() }
        let fftest = try Subprocess(["fftest", pad.eventNode])
        // fftest uploads six effects, then reads effect numbers from stdin: play the sine and both rumbles.
        fftest.write("0\n4\n5\n-1\n")
        fftest.closeInput()
        let status = fftest.finish(timeout: hangGuardSeconds)
        try requireEqual(status, 0, "fftest exit status (output:\n\(fftest.text))")
        // Closing its descriptor erases its six effects; once the sixth erase is in, everything before is too.
        let records = try await waitForRecords(pad, "fftest's six erases") { records in
            records.filter { $0.event == .erase }.count == 6
        }
        let uploads = records.filter { $0.event == .upload }
        try requireEqual(uploads.count, 6, "uploads from fftest")
        try require(uploads.allSatisfy { $0.retval == 0 }, "an fftest upload was refused: \(uploads)")
        let effects = uploads.compactMap(\.effect)
        try requireEqual(effects.map(\.kind.type), [.periodic, .constant, .spring, .damper, .rumble, .rumble], "types")
        try requireFftestFieldValues(effects)

        try requireEqual(records.filter { $0.event == .gain }.map(\.value), [0xc000], "fftest's 75% gain")
        let plays = records.filter { $0.event == .play }
        try requireEqual(plays.map(\.id), [effects[0].id, effects[4].id, effects[5].id], "played ids")
        try require(plays.allSatisfy { $0.count == 1 }, "fftest plays once: \(plays)")
        let stopped = Set(records.filter { $0.event == .stop }.compactMap(\.id))
        try requireEqual(stopped, Set(effects.map(\.id)), "stopped ids")
    }

    /// The six effects fftest uploads, in order, hold the field values fftest sets in its source.
    /// Fields fftest leaves uninitialised (the rumbles' direction and trigger) are not checked.
    static func requireFftestFieldValues(_ effects: [ForceFeedbackEffect]) throws {
        let sine = effects[0]
        try requireEqual(
            sine.kind,
            .periodic(
                waveform: .sine, period: 10, magnitude: 0x7fff, offset: 0, phase: 0,
                envelope: ForceFeedbackEnvelope(
                    attackLength: 1000, attackLevel: 0x7fff, fadeLength: 1000, fadeLevel: 0x7fff)),
            "sine effect")
        try requireEqual(
            [sine.direction, sine.replayLength, sine.replayDelay], [0x4000, 20000, 1000], "sine direction/replay")
        let constant = effects[1]
        try requireEqual(
            constant.kind,
            .constant(
                level: 0x2000,
                envelope: ForceFeedbackEnvelope(
                    attackLength: 1000, attackLevel: 0x1000, fadeLength: 1000, fadeLevel: 0x1000)),
            "constant effect")
        try requireEqual(
            [constant.direction, constant.replayLength, constant.replayDelay], [0x6000, 20000, 0],
            "constant direction/replay")
        let axis = ForceFeedbackCondition(
            rightSaturation: 0x7fff, leftSaturation: 0x7fff, rightCoefficient: 0x2000, leftCoefficient: 0x2000)
        try requireEqual(effects[2].kind, .condition(type: .spring, axes: [axis, axis]), "spring effect")
        try requireEqual(effects[3].kind, .condition(type: .damper, axes: [axis, axis]), "damper effect")
        try requireEqual([effects[2].replayLength, effects[3].replayLength], [20000, 20000], "condition replay")
        try requireEqual(effects[4].kind, .rumble(strong: 0x8000, weak: 0), "strong rumble")
        try requireEqual([effects[4].replayLength, effects[4].replayDelay], [5000, 1000], "strong rumble replay")
        try requireEqual(effects[5].kind, .rumble(strong: 0, weak: 0xc000), "weak rumble")
        try requireEqual([effects[5].replayLength, effects[5].replayDelay], [5000, 0], "weak rumble replay")
    }

    // MARK: (c) unplug

    static func destroyGivesENODEV() async throws {
        let pad = try makePad()
        let client = try client(pad.eventNode)
        do {
            let id = try client.uploadRumble(strong: 0x4000, weak: 0x4000, length: 100)
            pad.destroy()
            do {
                try client.play(id)
                throw TestFailure(reason: "a play on a destroyed pad succeeded")
            } catch let error as ClientError {
                try requireEqual(error.errno, .noDevice, "errno of the write after destroy (\(error))")
            }
        } catch let error as ClientError {
            throw TestFailure(reason: "client before destroy: \(error)")
        }
    }

    // MARK: (d) a full device

    static func failUploadsThroughLibrary() async throws {
        let pad = try makePad(VirtualPadConfiguration(failUploadsAfter: 2))
        defer { pad.destroy() }
        let client = try client(pad.eventNode)
        try uploadThreeExpectingENOSPC(client)
        let records = try await waitForRecords(pad, "three uploads") { $0.filter { $0.event == .upload }.count == 3 }
        try requireEqual(records.filter { $0.event == .upload }.map(\.retval), [0, 0, -ENOSPC], "recorded retvals")
    }

    static func uploadThreeExpectingENOSPC(_ client: RawClient) throws {
        do {
            try requireEqual(try client.uploadRumble(strong: 1, weak: 1), 0, "first slot")
            try requireEqual(try client.uploadRumble(strong: 2, weak: 2), 1, "second slot")
        } catch let error as ClientError {
            throw TestFailure(reason: "the first two uploads must succeed: \(error)")
        }
        do {
            try client.uploadRumble(strong: 3, weak: 3)
            throw TestFailure(reason: "the third upload succeeded")
        } catch let error as ClientError {
            try requireEqual(error.errno, .noSpace, "errno of the third upload (\(error))")
        }
    }

    /// Starts `haptics virtual-pad` and returns it with its node and sysname from its first line.
    static func startCLI(_ extra: [String], terminal: Bool = false) throws -> (
        process: Subprocess, node: String, sysname: String
    ) {
        let cli = try Subprocess([projectBinary("haptics"), "virtual-pad"] + extra, terminal: terminal)
        cli.read(until: { $0.contains(where: \.isNewline) }, timeout: hangGuardSeconds)
        let words = cli.text.split(whereSeparator: \.isNewline).first?.split(separator: " ") ?? []
        guard words.count > 3, words[0] == "created", words[2] == "sysname" else {
            throw TestFailure(reason: "haptics virtual-pad did not report its node:\n\(cli.text)")
        }
        return (cli, String(words[1]), String(words[3]))
    }

    static func failUploadsThroughCLI() async throws {
        let record = "vpad-cli-record-\(getpid()).jsonl"
        defer { unlink(record) }
        let (cli, node, _) = try startCLI(["--fail-uploads-after", "2", "--record", record])
        do {
            let client = try client(node)
            try uploadThreeExpectingENOSPC(client)
            client.close()
        }
        cli.signal(SIGINT)
        try requireEqual(cli.finish(timeout: hangGuardSeconds), 0, "exit status after SIGINT (output:\n\(cli.text))")
        let records = try PadRecord.decodeLines(try readFile(record))
        try requireEqual(
            records.filter { $0.event == .upload }.map(\.retval), [0, 0, -ENOSPC], "retvals in the record file")
        try require(cli.text.contains("retval=-\(ENOSPC)"), "the CLI did not print the refused upload:\n\(cli.text)")
    }

    /// A playing command on a pad that refuses uploads ends with status 1 and a line on why, naming the node and the
    /// errno: `play` whether the pad refuses the first upload or a later one (the engine stops in the middle of the
    /// play), `feedback` and `replay` (which print what plays until the end unless stopped) when it refuses the first.
    static func playingCommandsSayWhyThePadRefused() async throws {
        let path = "/tmp/haptics-two-levels.ahap"
        try writeFile(
            path,
            """
            {"Pattern": [
              {"Event": {"Time": 0, "EventType": "HapticContinuous", "EventDuration": 0.2,
                "EventParameters": [{"ParameterID": "HapticIntensity", "ParameterValue": 0.3}]}},
              {"Event": {"Time": 0.2, "EventType": "HapticContinuous", "EventDuration": 0.2,
                "EventParameters": [{"ParameterID": "HapticIntensity", "ParameterValue": 1}]}}]}
            """)
        defer { unlink(path) }
        let runs: [(command: [String], accepted: Int)] = [
            (["play", path], 0), (["play", path], 1), (["feedback", "impact", "heavy"], 0),
            (["replay", "--chapter", "1"], 0),
        ]
        for (command, accepted) in runs {
            let name = command[0]
            let expected = "haptics \(name): the engine stopped the \(name) (deviceError): "
            let pad = try makePad(VirtualPadConfiguration(failUploadsAfter: accepted))
            defer { pad.destroy() }
            let run = try Subprocess(
                [projectBinary("haptics")] + command + ["--json", "--device", pad.eventNode])
            let status = run.finish(timeout: hangGuardSeconds)
            let lines = run.text.split(whereSeparator: \.isNewline)
            let said = lines.filter { $0.hasPrefix(expected) }
            let context = "haptics \(command.joined(separator: " ")) on a pad accepting \(accepted) upload(s)"
            try requireEqual(status, 1, "status of \(context):\n\(run.text)")
            try require(
                said.count == 1 && said[0].count > expected.count && !run.text.contains("Error:"),
                "no line starting \(expected) with the reason after it, from \(context):\n\(run.text)")
            try require(
                !lines.contains { $0.contains(#""event":"finished""#) },
                "\(context) says it finished:\n\(run.text)")
            // The reason is the device's, as the engine heard it: the node, the call and its errno (feedback and
            // replay said only "the device refused what the engine needs" until 6 December), and the output
            // is named though the engine stopped before the line (it was "?").
            try require(
                said[0].contains(pad.eventNode) && said[0].contains("errno 28"),
                "the reason does not name the node and the errno, from \(context):\n\(run.text)")
            try require(!run.text.contains(#""output":"?""#), "\(context) names no output:\n\(run.text)")
            print("  \(context): \(said[0])")
        }
    }

    static func sigtermRemovesNode() async throws {
        let (cli, node, sysname) = try startCLI([])
        try require(access(node, F_OK) == 0, "\(node) does not exist while the CLI runs")
        cli.signal(SIGTERM)
        try requireEqual(cli.finish(timeout: hangGuardSeconds), 0, "exit status after SIGTERM (output:\n\(cli.text))")
        try require(access(node, F_OK) != 0 && errno == ENOENT, "\(node) still exists after SIGTERM")
        try require(
            access("/sys/devices/virtual/input/\(sysname)", F_OK) != 0, "\(sysname) still in sysfs after SIGTERM")
    }

    /// On a terminal the CLI redraws one line with both motor levels; a played rumble shows up in it.
    static func cliShowsLiveLevelsOnATerminal() async throws {
        let (cli, node, _) = try startCLI([], terminal: true)
        let client = try client(node)
        try asClient { () throws(ClientError) in
            try client.play(try client.uploadRumble(strong: 0xffff, weak: 0x8000))
        }
        // 24-character bars: 0xffff fills all of them, 0x8000 half (0x8000 * 24 / 0xffff = 12).
        let full = "strong [" + String(repeating: "#", count: 24) + "] 100%"
        let half = "weak [" + String(repeating: "#", count: 12) + String(repeating: ".", count: 12) + "] 50%"
        let shown = cli.read(until: { $0.contains(full + "  " + half) }, timeout: hangGuardSeconds)
        client.close()
        cli.signal(SIGTERM)
        let status = cli.finish(timeout: hangGuardSeconds)
        try require(shown, "the live view never showed \(full)  \(half):\n\(cli.text)")
        try requireEqual(status, 0, "exit status after SIGTERM")
    }

    /// With a udev daemon running, udev's input_id builtin must see a joystick (what uaccess rules and game
    /// libraries key on).
    static func udevTagsAJoystick() async throws {
        guard access("/run/udev/control", F_OK) == 0, onPath("udevadm") else {
            throw TestSkip(.udevd, "no udev daemon here (in the VM bench: scripts/vm-run --udevd)")
        }
        let pad = try makePad()
        defer { pad.destroy() }
        let settle = try Subprocess(["udevadm", "settle", "--timeout=\(Int(hangGuardSeconds))"])
        try requireEqual(settle.finish(timeout: hangGuardSeconds + 5), 0, "udevadm settle (\(settle.text))")
        let info = try Subprocess(["udevadm", "info", "--query=property", "--name=\(pad.eventNode)"])
        try requireEqual(info.finish(timeout: hangGuardSeconds), 0, "udevadm info (\(info.text))")
        let properties = Set(info.text.split(whereSeparator: \.isNewline).map(String.init))
        try require(
            properties.contains("ID_INPUT_JOYSTICK=1") && properties.contains("ID_INPUT=1"),
            "udev did not tag \(pad.eventNode) a joystick:\n\(info.text)")
        try require(!properties.contains("ID_INPUT_KEYBOARD=1"), "udev took the pad for a keyboard:\n\(info.text)")
    }

    /// uinput installs its own `dev->event` over ff-core's `input_ff_event`, so EV_FF writes reach the pad
    /// unfiltered: a gain on a pad without FF_GAIN, a play of a slot no one uploaded. ff-memless would ignore
    /// both; the record keeps them and the motor model ignores them.
    static func unfilteredEventsReachThePad() async throws {
        let pad = try makePad(VirtualPadConfiguration(features: [.rumble]))
        defer { pad.destroy() }
        let client = try client(pad.eventNode)
        let unusedSlot: Int16 = 7
        try asClient { () throws(ClientError) in
            try client.setGain(0x1234)
            try client.play(unusedSlot)
            try client.play(try client.uploadRumble(strong: 0x8000, weak: 0x4000))
        }
        let records = try await waitForRecords(pad, "the uploaded effect's play") {
            $0.filter { $0.event == .play }.count == 2
        }
        try requireEqual(records.map(\.event), [.gain, .play, .upload, .play], "records")
        try requireEqual(records[0].value, 0x1234, "gain written to a pad without FF_GAIN")
        try requireEqual(records[1].id, unusedSlot, "play of an empty slot")
        // The model follows ff-memless: gain 0x1234 scales the rumble (0x8000 * 0x1234 / 0xffff = 2330.03,
        // 0x4000 * 0x1234 / 0xffff = 1165.02), the empty slot contributes nothing.
        let time = PadTimestamp(microseconds: records[3].time.microseconds + 1000)
        try requireEqual(
            pad.motorOutput(at: time), MotorMagnitudes(rumbleStrong: 2330, rumbleWeak: 1165), "modelled output")
    }

    // MARK: Records and the motor model

    /// A raw client's upload, gain, play, stop and erase.
    static func exercise(_ client: RawClient) throws -> Int16 {
        try asClient { () throws(ClientError) in
            let id = try client.uploadRumble(strong: 0x8000, weak: 0x4000)
            try client.setGain(0x8000)
            try client.play(id)
            try client.stop(id)
            try client.erase(id)
            return id
        }
    }

    static func timestampsAreMonotonic() async throws {
        let pad = try makePad()
        defer { pad.destroy() }
        let before = PadTimestamp(seconds: monotonicSeconds())
        let id = try exercise(try client(pad.eventNode))
        let after = PadTimestamp(seconds: monotonicSeconds())
        let records = try await waitForRecords(pad, "the erase") { $0.contains { $0.event == .erase } }
        let expected: [PadRecord.Event] = [.upload, .gain, .play, .stop, .stop, .erase]
        try requireEqual(records.map(\.event), expected, "record order (EVIOCRMFF delivers a stop first)")
        try require(records.allSatisfy { $0.id == nil || $0.id == id }, "ids: \(summary(records))")
        let times = records.map(\.time)
        try require(zip(times, times.dropFirst()).allSatisfy { $0 <= $1 }, "timestamps go backwards: \(times)")
        // One microsecond of slack for the truncation of both sides to whole microseconds.
        let slack: Int64 = 1
        try require(
            times.allSatisfy {
                $0.microseconds >= before.microseconds - slack && $0.microseconds <= after.microseconds + slack
            },
            "timestamps \(times) are not on CLOCK_MONOTONIC between \(before) and \(after)")
    }

    /// With `keepsRecords` off nothing accumulates in memory, and the stream still carries every record.
    static func streamWithoutRetainedRecords() async throws {
        let pad = try makePad(VirtualPadConfiguration(keepsRecords: false))
        defer { pad.destroy() }
        let stream = pad.recordStream()
        _ = try exercise(try client(pad.eventNode))
        let streamed = await withTaskGroup(of: [PadRecord].self) { group in
            group.addTask {
                var seen: [PadRecord] = []
                for await record in stream {
                    seen.append(record)
                    if record.event == .erase { break }
                }
                return seen
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(hangGuardSeconds))
                return []
            }
            let first = await group.next() ?? []
            group.cancelAll()
            return first
        }
        try requireEqual(streamed.map(\.event), [.upload, .gain, .play, .stop, .stop, .erase], "streamed records")
        try requireEqual(pad.records(), [], "records kept in memory")
    }

    static func recordFileMatchesMemory() async throws {
        let path = "vpad-record-\(getpid()).jsonl"
        defer { unlink(path) }
        let pad = try makePad(VirtualPadConfiguration(recordPath: path))
        _ = try exercise(try client(pad.eventNode))
        try await waitForRecords(pad, "the erase") { $0.contains { $0.event == .erase } }
        pad.destroy()
        let fromFile = try PadRecord.decodeLines(try readFile(path))
        try requireEqual(fromFile, pad.records(), "records in the file")
        var status = stat()
        try require(stat(path, &status) == 0, "cannot stat \(path)")
        let mask = umask(0)
        umask(mask)
        try requireEqual(status.st_mode & 0o777, 0o644 & ~mask, "record file permissions")
    }

    static func motorModelFollowsClient() async throws {
        let pad = try makePad()
        defer { pad.destroy() }
        let client = try client(pad.eventNode)
        let strong: UInt16 = 0x8000
        let weak: UInt16 = 0x4000
        let gain: UInt16 = 0x8000
        let id = try asClient { () throws(ClientError) in
            let id = try client.uploadRumble(strong: strong, weak: weak)
            try client.play(id)
            return id
        }
        let playing = try await waitForRecords(pad, "the play") { $0.contains { $0.event == .play } }
        // A millisecond after the play event; the model works in 4 ms kernel ticks, so this is the play's tick.
        let millisecond: Int64 = 1000
        let playTime = playing.last { $0.event == .play }?.time ?? PadTimestamp(microseconds: 0)
        let atPlay = pad.motorOutput(at: PadTimestamp(microseconds: playTime.microseconds + millisecond))
        try requireEqual(atPlay, MotorMagnitudes(rumbleStrong: strong, rumbleWeak: weak), "motor output while playing")
        try asClient { () throws(ClientError) in try client.setGain(gain) }
        _ = try await waitForRecords(pad, "the gain") { $0.contains { $0.event == .gain } }
        // The stop a few 4 ms ticks later, so that the model has a tick at the new gain to show.
        try await Task.sleep(for: .milliseconds(10))
        try asClient { () throws(ClientError) in try client.stop(id) }
        let records = try await waitForRecords(pad, "the stop") { $0.contains { $0.event == .stop } }
        let model = pad.motorModel()
        let gainTime = records.first { $0.event == .gain }?.time ?? playTime
        let stopTime = records.first { $0.event == .stop }?.time ?? playTime
        // ff-memless: magnitude * gain / 0xffff, truncated.
        let scaled = MotorMagnitudes(
            rumbleStrong: UInt16(UInt32(strong) * UInt32(gain) / 0xffff),
            rumbleWeak: UInt16(UInt32(weak) * UInt32(gain) / 0xffff))
        try require(
            gainTime.microseconds / 4000 < stopTime.microseconds / 4000,
            "the gain (\(gainTime)) and the stop (\(stopTime)) 10 ms apart fell in one tick")
        try requireEqual(model.output(at: gainTime), scaled, "motor output after the gain change")
        try requireEqual(
            model.output(at: PadTimestamp(microseconds: stopTime.microseconds + millisecond)), .off, "after the stop")
    }

    static func noDescriptorLeak() async throws {
        // The runtime's own timerfds (opened on a task's first sleep, kept for the process) are not the pad's.
        try await EngineSuite.warmUpRuntime()
        let before = openDescriptors()
        do {
            let pad = try makePad(VirtualPadConfiguration(recordPath: "vpad-leak-\(getpid()).jsonl"))
            defer { unlink("vpad-leak-\(getpid()).jsonl") }
            let client = try client(pad.eventNode)
            _ = try exercise(client)
            try await waitForRecords(pad, "the erase") { $0.contains { $0.event == .erase } }
            client.close()
            pad.destroy()
        }
        try requireEqual(descriptorsOpened(since: before), [], "descriptors left open after a pad's whole life")
    }

    // MARK: Updates of one effect, and their round trip (printed, never asserted)

    /// 200 `EVIOCSFF` updates of one rumble effect, each with its own strong level (0, 1, 2...): the pad receives
    /// each as a replacement of that effect, with that level, in the order sent. How long each round trip took is
    /// printed; timing is the benchmarks' to judge.
    static func updatesOfOneEffect() async throws {
        let pad = try makePad()
        defer { pad.destroy() }
        let client = try client(pad.eventNode)
        let rounds = 200
        var samples = try asClient { () throws(ClientError) in
            let id = try client.uploadRumble(strong: 0, weak: 0)
            return try (0..<rounds).map { (round) throws(ClientError) in
                let start = monotonicSeconds()
                try client.uploadRumble(strong: UInt16(round), weak: 0, id: id)
                return (monotonicSeconds() - start) * 1000
            }
        }
        let records = try await waitForRecords(pad, "\(rounds + 1) uploads") {
            $0.filter { $0.event == .upload }.count == rounds + 1
        }
        let updates = Array(records.dropFirst())
        try require(updates.allSatisfy { $0.replacing == true }, "updates not recorded as replacing")
        try require(
            Set(records.map(\.id)).count == 1, "the updates went to other effects: ids \(Set(records.map(\.id)))")
        let levels = updates.map { record -> Int? in
            guard case .rumble(let strong, _)? = record.effect?.kind else { return nil }
            return Int(strong)
        }
        try require(
            levels == (0..<rounds).map { $0 }, "the pad got other levels, or in another order: \(levels.prefix(12))...")
        samples.sort()
        func percentile(_ p: Int) -> String {
            let value = samples[min(samples.count - 1, samples.count * p / 100)]
            return String(Int((value * 1000).rounded())) + " us"
        }
        print(
            "  EVIOCSFF round trip through the pad, \(rounds) updates: p50 \(percentile(50)), p99 \(percentile(99)), max \(percentile(100))"
        )
    }
}

func readFile(_ path: String) throws -> String {
    guard let file = fopen(path, "r") else {
        throw TestFailure(reason: "cannot read \(path): \(String(cString: strerror(errno)))")
    }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = fread(&buffer, 1, buffer.count, file)
        if count == 0 { break }
        bytes += buffer.prefix(count)
    }
    return String(decoding: bytes, as: UTF8.self)
}
