import AHAP
import HapticRendering
import Testing

/// The waveform renderer, measured on what it produces: carrier frequency from zero crossings, envelope from the
/// carrier's crests, burst lengths, channels, the limiter's bound, and sameness however the stream is cut.
@Suite struct WaveformRendererTests {
    static let usbRate = 48_000.0
    static let bluetoothRate = 3_000.0

    // MARK: Measuring

    /// Times of the rising zero crossings in `samples[range]`, each interpolated between its two samples.
    static func risingCrossings(_ samples: [Double], rate: Double, in range: Range<Int>? = nil) -> [Double] {
        let range = range ?? samples.indices
        var times: [Double] = []
        for index in range.dropFirst() where samples[index - 1] <= 0 && samples[index] > 0 {
            let fraction = -samples[index - 1] / (samples[index] - samples[index - 1])
            times.append((Double(index - 1) + fraction) / rate)
        }
        return times
    }

    /// The carrier frequency over `range`: whole cycles between the first and last rising crossing.
    static func frequency(_ samples: [Double], rate: Double, in range: Range<Int>? = nil) -> Double {
        let crossings = risingCrossings(samples, rate: rate, in: range)
        guard let first = crossings.first, let last = crossings.last, last > first else { return 0 }
        return Double(crossings.count - 1) / (last - first)
    }

    /// The largest magnitude in `range`.
    static func peak(_ samples: [Double], in range: Range<Int>) -> Double {
        samples[range].map(abs).max() ?? 0
    }

    /// The frames that are not silent: from the first to the last sample with any level.
    static func soundingSpan(_ samples: [Double]) -> Range<Int>? {
        guard let first = samples.firstIndex(where: { $0 != 0 }), let last = samples.lastIndex(where: { $0 != 0 })
        else { return nil }
        return first..<(last + 1)
    }

    static func render(
        _ pattern: HapticPattern, rate: Double = usbRate, seconds: Double, locality: HapticLocality = .all
    )
        -> ActuatorFrames
    {
        WaveformRenderer(pattern: pattern, sampleRate: rate, locality: locality)
            .render(from: 0, count: Int(seconds * rate))
    }

    static func steady(sharpness: Double, intensity: Double = 1, duration: Double = 1) -> HapticPattern {
        Build.pattern([Build.continuous(at: 0, duration: duration, intensity: intensity, sharpness: sharpness)])
    }

    // MARK: The maps

    @Test func sharpnessMapsGeometricallyFromFiftyToThreeHundredHertz() {
        let map = SharpnessFrequencyMap.voiceCoil
        #expect(close(map.frequency(sharpness: 0), 50, within: 1e-9))
        #expect(close(map.frequency(sharpness: 1), 300, within: 1e-9))
        #expect(close(map.frequency(sharpness: 0.5), 50 * 6.0.squareRoot(), within: 1e-9))
        #expect(map.frequency(sharpness: -1) == map.frequency(sharpness: 0))
        #expect(map.frequency(sharpness: 2) == map.frequency(sharpness: 1))
        let sweep = stride(from: 0.0, through: 1, by: 0.01).map { map.frequency(sharpness: $0) }
        #expect(zip(sweep, sweep.dropFirst()).allSatisfy { $0 < $1 })
    }

    @Test func theAmplitudeCurveIsLinearAtLowFrequencyAndSteeperWhereFeelingIsCompressive() {
        #expect(VibrationAmplitude.feltExponent(frequency: 50) == 1)
        #expect(VibrationAmplitude.feltExponent(frequency: 300) == 0.6)
        #expect(close(VibrationAmplitude.feltExponent(frequency: (60.0 * 250).squareRoot()), 0.8, within: 1e-9))
        #expect(close(VibrationAmplitude.amplitude(level: 0.5, frequency: 50), 0.5))
        #expect(close(VibrationAmplitude.amplitude(level: 0.5, frequency: 300), 0.314_980_262_473_718_3, within: 1e-9))
        for frequency in [50.0, 120, 300] {
            #expect(VibrationAmplitude.amplitude(level: 0, frequency: frequency) == 0)
            #expect(close(VibrationAmplitude.amplitude(level: 1, frequency: frequency), 1))
            let curve = stride(from: 0.0, through: 1, by: 0.05).map {
                VibrationAmplitude.amplitude(level: $0, frequency: frequency)
            }
            #expect(zip(curve, curve.dropFirst()).allSatisfy { $0 < $1 })
        }
    }

    // MARK: Carrier frequency

    @Test(arguments: [(0.0, 50.0), (0.5, 122.474_487_139_158_9), (1.0, 300.0)])
    func aContinuousEventsCarrierHasItsSharpnessFrequencyOnUSB(sharpness: Double, hertz: Double) {
        let left = Self.render(Self.steady(sharpness: sharpness), seconds: 1).left
        #expect(close(Self.frequency(left, rate: Self.usbRate), hertz, within: hertz * 1e-6))
    }

    @Test(arguments: [(0.0, 50.0), (0.5, 122.474_487_139_158_9), (1.0, 300.0)])
    func theCarrierKeepsItsFrequencyAtTheBluetoothRate(sharpness: Double, hertz: Double) {
        let left = Self.render(Self.steady(sharpness: sharpness), rate: Self.bluetoothRate, seconds: 1).left
        #expect(close(Self.frequency(left, rate: Self.bluetoothRate), hertz, within: hertz * 1e-3))
    }

    @Test func aSharpnessCurveSweepsTheCarrierUpwardWithoutAClick() {
        let pattern = Build.pattern(
            [Build.continuous(at: 0, duration: 2, intensity: 1, sharpness: 0)],
            curves: [Build.curve(.hapticSharpnessControl, at: 0, [(0, 0), (2, 1)])])
        let left = Self.render(pattern, seconds: 2).left
        let window = Int(0.1 * Self.usbRate)
        var measured: [Double] = []
        for start in stride(from: 0, to: left.count - window, by: window) {
            let middle = (Double(start) + Double(window) / 2) / Self.usbRate
            let expected = SharpnessFrequencyMap.voiceCoil.frequency(sharpness: middle / 2)
            let hertz = Self.frequency(left, rate: Self.usbRate, in: start..<(start + window))
            #expect(close(hertz, expected, within: expected * 0.03), "at \(middle) s")
            measured.append(hertz)
        }
        #expect(zip(measured, measured.dropFirst()).allSatisfy { $0 < $1 })
        // At full level the steepest a sine can move between two frames is 2π f / rate: any phase jump is larger.
        let steepest = 2 * 3.141_592_653_589_793 * 300 / Self.usbRate
        let largestStep = zip(left, left.dropFirst()).map { abs($1 - $0) }.max() ?? 0
        #expect(largestStep <= steepest * 1.001)
    }

    @Test func aSharpnessJumpChangesFrequencyWithoutAPhaseJump() {
        let pattern = Build.pattern(
            [Build.continuous(at: 0, duration: 1, intensity: 1, sharpness: 0)],
            parameters: [HapticDynamicParameter(parameterID: .hapticSharpnessControl, value: 1, relativeTime: 0.5013)])
        let left = Self.render(pattern, seconds: 1).left
        let half = Int(0.5 * Self.usbRate)
        #expect(close(Self.frequency(left, rate: Self.usbRate, in: 0..<half), 50, within: 0.01))
        #expect(close(Self.frequency(left, rate: Self.usbRate, in: (half + 200)..<left.count), 300, within: 0.01))
        let steepest = 2 * 3.141_592_653_589_793 * 300 / Self.usbRate
        let largestStep = zip(left, left.dropFirst()).map { abs($1 - $0) }.max() ?? 0
        #expect(largestStep <= steepest * 1.001)
    }

    @Test func theCarrierIsCappedAtAQuarterOfTheSampleRate() {
        let rate = 800.0
        let left = Self.render(Self.steady(sharpness: 1), rate: rate, seconds: 1).left
        #expect(close(Self.frequency(left, rate: rate), rate / 4, within: 1e-6))
    }

    // MARK: Envelope

    /// At 50 Hz and 48 kHz a cycle is 960 frames and its crest falls on a frame, so the crests read the envelope.
    static func crests(_ samples: [Double]) -> [(time: Double, level: Double)] {
        stride(from: 240, to: samples.count, by: 960).map { (Double($0) / usbRate, samples[$0]) }
    }

    @Test func theCarrierAmplitudeFollowsIntensityThroughTheFeltCurve() {
        for (sharpness, hertz) in [(0.0, 50.0), (1.0, 300.0)] {
            let left = Self.render(Self.steady(sharpness: sharpness, intensity: 0.5), seconds: 1).left
            let expected = VibrationAmplitude.amplitude(level: 0.5, frequency: hertz)
            #expect(close(Self.peak(left, in: 4800..<43200), expected, within: 1e-3), "at \(hertz) Hz")
        }
    }

    @Test func crestsFollowTheMotorRenderersIntensityEnvelope() {
        // Attack, an intensity curve and a release: the envelope the rumble path plays, read off the carrier.
        let pattern = Build.pattern(
            [
                Build.continuous(
                    at: 0, duration: 0.6, intensity: 0.9, sharpness: 0,
                    extra: [(.attackTime, 0.75), (.releaseTime, 0.6)])
            ],
            curves: [Build.curve(.hapticIntensityControl, at: 0.3, [(0, 1), (0.3, 0.4)])])
        let left = Self.render(pattern, seconds: 0.8).left
        let envelope = PatternRenderer().intensityEnvelope(pattern)
        for crest in Self.crests(left) {
            #expect(
                close(crest.level, envelope.levels(at: crest.time).strong, within: PatternRenderer.tolerance + 1e-9),
                "at \(crest.time) s")
        }
    }

    @Test func aContinuousEventIsSilentOutsideItsEnvelope() {
        let pattern = Build.pattern([Build.continuous(at: 0.25, duration: 0.5, intensity: 1, sharpness: 0.3)])
        let left = Self.render(pattern, seconds: 1).left
        #expect(Self.soundingSpan(left) == 12001..<36000)
    }

    // MARK: Transients

    @Test(arguments: [(0.0, 50.0), (0.5, 122.474_487_139_158_9), (1.0, 300.0)])
    func aTransientIsABurstOfTwoCyclesAtItsSharpnessFrequency(sharpness: Double, hertz: Double) throws {
        let pattern = Build.pattern([Build.transient(at: 0.1, intensity: 1, sharpness: sharpness)])
        let left = Self.render(pattern, seconds: 0.3).left
        let span = try #require(Self.soundingSpan(left))
        let length = Double(span.count + 1) / Self.usbRate
        #expect(close(length, 2 / hertz, within: 2 / Self.usbRate))
        #expect(close(Double(span.lowerBound - 1) / Self.usbRate, 0.1, within: 1e-9))
        let crossings = Self.risingCrossings(left, rate: Self.usbRate)
        #expect(crossings.count == 2)
        #expect(close(Self.frequency(left, rate: Self.usbRate), hertz, within: hertz * 1e-3))
        #expect(close(Self.peak(left, in: span), 1, within: 1e-3))
    }

    @Test func aTransientsDecayTimeRampsTheCarrierDownAfterTheBurst() throws {
        let decay = EnvelopeTiming.seconds(forAdjuster: 0.75)
        let pattern = Build.pattern([Build.transient(at: 0, intensity: 1, sharpness: 0, decay: 0.75)])
        let left = Self.render(pattern, seconds: 0.5).left
        let span = try #require(Self.soundingSpan(left))
        #expect(close(Double(span.upperBound) / Self.usbRate, 0.04 + decay, within: 0.021))
        // 50 Hz crests: full during the two-cycle burst, then falling linearly over the decay.
        for crest in Self.crests(left) {
            let expected = crest.time < 0.04 ? 1 : Swift.max(0, 1 - (crest.time - 0.04) / decay)
            #expect(close(crest.level, expected, within: 1e-6), "at \(crest.time) s")
        }
    }

    // MARK: Channels and mixing

    @Test func localitiesPickTheChannels() {
        let pattern = Self.steady(sharpness: 0.4, intensity: 0.7, duration: 0.2)
        let both = Self.render(pattern, seconds: 0.3, locality: .all)
        let left = Self.render(pattern, seconds: 0.3, locality: .leftHandle)
        let right = Self.render(pattern, seconds: 0.3, locality: .rightHandle)
        #expect(both.left == both.right)
        #expect(Self.peak(both.left, in: 0..<both.count) > 0.5)
        #expect(left.left == both.left)
        #expect(left.right.allSatisfy { $0 == 0 })
        #expect(right.right == both.right)
        #expect(right.left.allSatisfy { $0 == 0 })
        #expect(both.interleaved.count == 2 * both.count)
    }

    @Test func theLimiterPassesQuietSignalsAndBoundsLoudOnesBelowFullScale() {
        let limiter = SoftLimiter.standard
        for sample in stride(from: -0.89, through: 0.89, by: 0.01) { #expect(limiter(sample) == sample) }
        let loud = stride(from: 0.9, through: 1000, by: 0.37).map { limiter($0) }
        #expect(loud.allSatisfy { $0 < 1 })
        #expect(zip(loud, loud.dropFirst()).allSatisfy { $0 < $1 })
        #expect(close(limiter(1), 0.95))
        #expect(close(limiter(-1), -0.95))
        #expect(limiter(.infinity) == 1)
        #expect(limiter(.nan) == 0)
        // No corner at the knee: the slope just above it is 1.
        #expect(close((limiter(0.9 + 1e-7) - 0.9) / 1e-7, 1, within: 1e-5))
    }

    @Test func playersAddAndTheLimiterKeepsTheirSumWithinFullScale() {
        let loud = Self.render(Self.steady(sharpness: 0.2, duration: 0.2), seconds: 0.2)
        let mix = ActuatorFrames.mixed(Array(repeating: loud, count: 8))
        let samples = mix.left + mix.right
        #expect(samples.allSatisfy { abs($0) < 1 })
        #expect(Self.peak(samples, in: 0..<samples.count) > 0.99)

        let quiet = Self.render(Self.steady(sharpness: 0.2, intensity: 0.3, duration: 0.2), seconds: 0.2)
        let other = Self.render(Self.steady(sharpness: 0.9, intensity: 0.3, duration: 0.1), seconds: 0.1)
        let sum = ActuatorFrames.mixed([quiet, other])
        #expect(sum.count == quiet.count)
        for index in 0..<quiet.count {
            let expected = quiet.left[index] + (index < other.count ? other.left[index] : 0)
            #expect(sum.left[index] == expected)
        }
    }

    @Test func overlappingEventsOfOnePatternSumAsSignals() {
        let a = Build.continuous(at: 0, duration: 0.5, intensity: 0.3, sharpness: 0)
        let b = Build.continuous(at: 0.1, duration: 0.3, intensity: 0.4, sharpness: 1)
        let together = Self.render(Build.pattern([a, b]), seconds: 0.6).left
        let apart = ActuatorFrames.mixed([
            Self.render(Build.pattern([a]), seconds: 0.6), Self.render(Build.pattern([b]), seconds: 0.6),
        ]).left
        #expect(zip(together, apart).allSatisfy { close($0, $1, within: 1e-12) })
    }

    @Test func audioEventsAndEmptyPatternsAreSilent() {
        let audio = HapticEvent(type: .audioContinuous, parameters: [], relativeTime: 0, duration: 1)
        let renderer = WaveformRenderer(pattern: Build.pattern([audio]), sampleRate: Self.usbRate)
        #expect(renderer.endFrame == 0)
        let frames = renderer.render(from: 0, count: 4800)
        #expect(frames.left.allSatisfy { $0 == 0 } && frames.right.allSatisfy { $0 == 0 })
    }

    // MARK: Incremental and deterministic

    static let busyPattern = Build.pattern(
        [
            Build.continuous(at: 0.0, duration: 0.8, intensity: 0.8, sharpness: 0.2, extra: [(.attackTime, 0.5)]),
            Build.transient(at: 0.1003, intensity: 1, sharpness: 0.9),
            Build.transient(at: 0.35, intensity: 0.6, sharpness: 0.1, decay: 0.4),
            Build.continuous(at: 0.5, duration: 0.4, intensity: 0.5, sharpness: 0.7, extra: [(.releaseTime, 0.5)]),
        ],
        curves: [
            Build.curve(.hapticSharpnessControl, at: 0.2, [(0, 0), (0.4, 0.3), (0.7, -0.2)]),
            Build.curve(.hapticIntensityControl, at: 0.1, [(0, 1), (0.5, 0.6)]),
        ])

    @Test(arguments: [usbRate, bluetoothRate])
    func blocksOfAnySizeEqualOneRenderingAtOnce(rate: Double) {
        let renderer = WaveformRenderer(pattern: Self.busyPattern, sampleRate: rate)
        let total = renderer.endFrame + 100
        let whole = renderer.render(from: 0, count: total)
        var cursor = renderer.cursor(at: 0)
        var streamed = ActuatorFrames.silent(count: 0)
        var sizes = [32, 1, 7, 500, 33, 1024]
        while cursor.position < total {
            let size = Swift.min(sizes.removeFirst(), total - cursor.position)
            sizes.append(size)
            streamed = streamed.appending(cursor.render(count: size))
        }
        #expect(streamed == whole)
        // Stateless blocks, each from its own starting frame, too.
        var pieces = ActuatorFrames.silent(count: 0)
        for start in stride(from: 0, to: total, by: total / 7) {
            pieces = pieces.appending(renderer.render(from: start, count: Swift.min(total / 7, total - start)))
        }
        #expect(pieces == whole)
    }

    @Test(arguments: [0.05, 0.1003, 0.37, 0.71])
    func seekingStartsMidPatternExactlyWhereTheWholeRenderingIs(seconds: Double) {
        let renderer = WaveformRenderer(pattern: Self.busyPattern, sampleRate: Self.usbRate)
        let whole = renderer.render(from: 0, count: renderer.endFrame)
        let frame = Int(seconds * Self.usbRate)
        var cursor = renderer.cursor(at: frame)
        let sought = cursor.render(count: 2000)
        #expect(sought.left == Array(whole.left[frame..<(frame + 2000)]))
        #expect(sought.right == Array(whole.right[frame..<(frame + 2000)]))
    }

    /// A cursor placed into a long voice passes over the frames where the sharpness control holds (steps, before
    /// a curve's first point, after its last) without looking at each; it must still land exactly where the
    /// rendering from the start is, next to every change of the control as much as between them, at any rate.
    @Test(arguments: [(usbRate, 1.0), (bluetoothRate, 1.0), (usbRate, 1.3), (bluetoothRate, 0.7)])
    func aCursorPlacedAnywhereInALongVoiceUnderSharpnessStepsIsExactlyWhereTheWholeRenderingIs(
        rate: Double, playbackRate: Double
    ) {
        let changes = [0.30001, 0.7, 1.23457, 1.5, 1.7, 2.0, 2.5]
        let pattern = Build.pattern(
            [
                Build.continuous(at: 0, duration: 3, intensity: 1, sharpness: 0.4),
                Build.transient(at: 1.1, intensity: 0.7, sharpness: 0.9),
            ],
            parameters: [
                HapticDynamicParameter(parameterID: .hapticSharpnessControl, value: 0.2, relativeTime: changes[0]),
                HapticDynamicParameter(parameterID: .hapticSharpnessControl, value: -0.3, relativeTime: changes[1]),
                HapticDynamicParameter(parameterID: .hapticSharpnessControl, value: 0.1, relativeTime: changes[2]),
                HapticDynamicParameter(parameterID: .hapticSharpnessControl, value: 0.5, relativeTime: changes[6]),
            ],
            curves: [Build.curve(.hapticSharpnessControl, at: changes[3], [(0.2, 0.5), (0.5, -0.1)])])
        let renderer = WaveformRenderer(pattern: pattern, sampleRate: rate, playbackRate: playbackRate)
        let whole = renderer.render(from: 0, count: renderer.endFrame)
        let framesPerSecond = rate / playbackRate
        let nearChanges = changes.flatMap { time -> [Int] in
            let frame = Int((time * framesPerSecond).rounded())
            return Array((frame - 2)...(frame + 2))
        }
        let count = 64
        let frames = Array(stride(from: 1, to: renderer.endFrame - count, by: renderer.endFrame / 37)) + nearChanges
        for frame in frames {
            var cursor = renderer.cursor(at: frame)
            let placed = cursor.render(count: count)
            #expect(placed.left == Array(whole.left[frame..<(frame + count)]), "placed at frame \(frame)")
        }
    }

    @Test func framesBeforeThePatternAndAfterItsEndAreSilent() {
        let renderer = WaveformRenderer(pattern: Self.busyPattern, sampleRate: Self.bluetoothRate)
        let before = renderer.render(from: -300, count: 300)
        let after = renderer.render(from: renderer.endFrame, count: 300)
        #expect((before.left + before.right + after.left + after.right).allSatisfy { $0 == 0 })
        let last = renderer.render(from: renderer.endFrame - 50, count: 50)
        #expect(last.left.contains { $0 != 0 })
    }

    @Test func renderingIsDeterministic() {
        let first = WaveformRenderer(pattern: Self.busyPattern, sampleRate: Self.bluetoothRate, locality: .rightHandle)
        let second = WaveformRenderer(pattern: Self.busyPattern, sampleRate: Self.bluetoothRate, locality: .rightHandle)
        #expect(first.render(from: 0, count: first.endFrame) == second.render(from: 0, count: second.endFrame))
        #expect(first.render(from: 0, count: first.endFrame) == first.render(from: 0, count: first.endFrame))
    }

    @Test func runtimeControlsActAsThePatternsOwn() {
        var controls = RuntimeControls()
        controls.send(
            [HapticDynamicParameter(parameterID: .hapticSharpnessControl, value: 1, relativeTime: 0)],
            atPatternTime: 0)
        let renderer = WaveformRenderer(
            pattern: Self.steady(sharpness: 0), controls: controls, sampleRate: Self.usbRate)
        let left = renderer.render(from: 0, count: 48000).left
        #expect(close(Self.frequency(left, rate: Self.usbRate), 300, within: 0.01))
    }

    @Test func everyFixtureStreamsAsItRendersStaysWithinFullScaleAndEndsSilent() throws {
        for (name, pattern) in try RenderCorpus.fixtures() {
            let renderer = WaveformRenderer(pattern: pattern, sampleRate: Self.bluetoothRate)
            let whole = renderer.render(from: 0, count: renderer.endFrame + 30)
            var cursor = renderer.cursor(at: 0)
            var streamed = ActuatorFrames.silent(count: 0)
            while cursor.position < whole.count {
                streamed = streamed.appending(cursor.render(count: Swift.min(32, whole.count - cursor.position)))
            }
            #expect(streamed == whole, "\(name)")
            let limited = ActuatorFrames.mixed([whole])
            #expect((limited.left + limited.right).allSatisfy { abs($0) < 1 }, "\(name)")
            #expect(whole.left.contains { $0 != 0 } || whole.right.contains { $0 != 0 }, "\(name)")
            let tail = whole.left[renderer.endFrame...] + whole.right[renderer.endFrame...]
            #expect(tail.allSatisfy { $0 == 0 }, "\(name)")
        }
    }

    @Test func theFirstVoiceFrameIsTheFrameItselfInsideAVoiceElseTheNextVoicesStartElseNone() {
        // At 3 kHz: a 100 ms tone from 0 (frames 0..<300) and one from 200 ms (from frame 600).
        let pattern = Build.pattern([
            Build.continuous(at: 0, duration: 0.1, intensity: 1, sharpness: 0.5),
            Build.continuous(at: 0.2, duration: 0.1, intensity: 1, sharpness: 0.5),
        ])
        let renderer = WaveformRenderer(pattern: pattern, sampleRate: Self.bluetoothRate)
        #expect(renderer.firstVoiceFrame(atOrAfter: 0) == 0)
        #expect(renderer.firstVoiceFrame(atOrAfter: 150) == 150)
        #expect(renderer.firstVoiceFrame(atOrAfter: 300) == 600, "the first tone ends at 300")
        // The last voice is under way until the renderer's end, the first frame from which nothing sounds.
        #expect(renderer.endFrame >= 900)
        #expect(renderer.firstVoiceFrame(atOrAfter: renderer.endFrame - 1) == renderer.endFrame - 1)
        #expect(renderer.firstVoiceFrame(atOrAfter: renderer.endFrame) == nil)
        // A long tone from 0 to 500 ms with a short one inside it (100 to 150 ms): at 200 ms the long one is under
        // way, though the voice that began last has ended.
        let nested = WaveformRenderer(
            pattern: Build.pattern([
                Build.continuous(at: 0, duration: 0.5, intensity: 1, sharpness: 0.5),
                Build.continuous(at: 0.1, duration: 0.05, intensity: 1, sharpness: 0.5),
            ]), sampleRate: Self.bluetoothRate)
        #expect(nested.firstVoiceFrame(atOrAfter: 600) == 600)
    }

    /// Frames at the end of `Int`'s range: a block rendered from a frame less than its length before `Int.max`, a
    /// cursor carried on past it, and an HD update's carriers there are silence and never trap (each added the
    /// count to the frame unchecked, and trapped on the overflow).
    @Test func framesAtTheEndOfIntsRangeAreSilenceAndNeverTrap() {
        let pattern = Build.pattern([Build.continuous(at: 0, duration: 1, intensity: 1, sharpness: 0.5)])
        let renderer = WaveformRenderer(pattern: pattern, sampleRate: 3000)
        let block = renderer.render(from: Int.max - 10, count: 100)
        #expect(block.count == 100)
        #expect(block == .silent(count: 100))
        var cursor = renderer.cursor(at: Int.max - 150)
        #expect(cursor.render(count: 100) == .silent(count: 100))
        #expect(cursor.render(count: 100) == .silent(count: 100))
        #expect(cursor.position == Int.max)
        let bands = BandRenderer(pattern: pattern)
        let carriers = bands.carriers(from: Int.max - 1, count: 10)
        #expect(carriers.left.isEmpty && carriers.right.isEmpty)
    }
}
