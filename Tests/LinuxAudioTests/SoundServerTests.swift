import LinuxAudio
import Testing

@Suite struct SoundServerRouteTests {
    static let surround = ["front-left", "front-right", "rear-left", "rear-right"]

    static func sink(_ name: String, card: Int?, _ positions: [String]) -> SoundServerSink {
        SoundServerSink(name: name, description: name, card: card, channelPositions: positions)
    }

    @Test func theFourChannelOutputOnTheCardIsChosenOverOthersAndOtherCards() throws {
        let outputs = SoundServer.Outputs(
            server: "pulseaudio 16.1",
            sinks: [
                Self.sink("speakers", card: 0, Self.surround),
                Self.sink("pad.analog-stereo", card: 3, ["front-left", "front-right"]),
                Self.sink("pad.analog-surround-40", card: 3, Self.surround),
            ])
        let chosen = try SoundServer.sink(forCard: 3, channels: 4, in: outputs).get()
        #expect(chosen.name == "pad.analog-surround-40")
    }

    @Test func anOutputWithMoreChannelsServesWhenItsFirstFourAreTheStreamsPositions() throws {
        let outputs = SoundServer.Outputs(
            server: "PulseAudio (on PipeWire 1.2.7) 15.0.0",
            sinks: [Self.sink("pad.surround-51", card: 1, Self.surround + ["front-center", "lfe"])])
        #expect(try SoundServer.sink(forCard: 1, channels: 4, in: outputs).get().name == "pad.surround-51")
    }

    @Test func aStereoProfileIsRefusedWithTheMapFoundAndTheProfileToChoose() {
        let outputs = SoundServer.Outputs(
            server: "pulseaudio 16.1", sinks: [Self.sink("pad.analog-stereo", card: 3, ["front-left", "front-right"])])
        guard case .failure(let error) = SoundServer.sink(forCard: 3, channels: 4, in: outputs) else {
            Issue.record("a stereo output was taken for four channels")
            return
        }
        #expect(error.description.contains("pad.analog-stereo (front-left,front-right)"))
        #expect(error.description.contains("analog-surround-40"))
        #expect(error.description.contains("pulseaudio 16.1"))
    }

    @Test func positionsInAnotherOrderAreRefusedBecauseTheServerWouldMoveTheChannels() {
        let outputs = SoundServer.Outputs(
            server: "pulseaudio 16.1",
            sinks: [Self.sink("pad", card: 3, ["front-left", "front-right", "side-left", "side-right"])])
        #expect((try? SoundServer.sink(forCard: 3, channels: 4, in: outputs).get()) == nil)
    }

    @Test func aCardWithNoOutputIsReportedAsHeldWithItsProfileOff() {
        let outputs = SoundServer.Outputs(
            server: "pulseaudio 16.1", sinks: [Self.sink("speakers", card: 0, Self.surround)])
        guard case .failure(let error) = SoundServer.sink(forCard: 3, channels: 4, in: outputs) else {
            Issue.record("an output on another card was taken")
            return
        }
        #expect(error.sinks.isEmpty)
        #expect(error.description.contains("offers no output on it"))
    }

    @Test func thePulsePluginIsTriedBeforePipeWiresWithTheSinkName() {
        let devices = SoundServer.alsaDevices(for: Self.sink("alsa_output.usb-pad-00.analog-surround-40", card: 3, []))
        #expect(
            devices == [
                "pulse:DEVICE=alsa_output.usb-pad-00.analog-surround-40",
                "pipewire:NODE=alsa_output.usb-pad-00.analog-surround-40",
            ])
    }
}
