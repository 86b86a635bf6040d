import Foundation
import MarginCore
import MarginKit

/// Live progress on stderr, a line for each piece of work going on: downloads (bytes, percent,
/// rate, time left), books read from their image (pages, pages a second, time left), and a
/// count of books done. Drawn only on a terminal, and never with --quiet or --json; notes of
/// retried downloads are said anywhere but with --quiet.
final class TerminalProgress: DownloadProgress, RecognitionObserver, @unchecked Sendable {
    private enum Work {
        /// A download: its size when known, bytes received, and from where it resumed.
        case transfer(total: Int64?, received: Int64, resumedAt: Int64)
        /// Pages read from their image.
        case recognition(read: Int, total: Int)
        /// Things done of a number (books indexed).
        case count(done: Int, total: Int)
    }

    private struct Line {
        var key: String
        var name: String
        var work: Work
        var started: Date
    }

    private let lock = NSLock()
    private var lines = [Line]()
    private var drawnLines = 0
    private var lastDraw = Date.distantPast

    /// Bars are drawn only on a terminal; retry notes are said anywhere.
    private let bars: Bool

    private init(bars: Bool) {
        self.bars = bars
    }

    /// A reporter unless the user wants no chatter (--quiet); bars only when stderr is a
    /// terminal and stdout isn't JSON.
    static func make(_ global: GlobalOptions) -> TerminalProgress? {
        global.quiet ? nil : TerminalProgress(bars: Console.stderrIsTTY && !global.json)
    }

    func retrying(_ url: String, attempt: Int, of attempts: Int, after delay: Double, reason: String) {
        // The reason may name the address too ("the server answered 503 for URL"): once is enough.
        let shown = redactedURL(url)
        let reason = reason.replacingAll(" for \(shown)", with: "").replacingAll(" for \(url)", with: "")
        let note =
            "note: \(shown): \(reason); trying again in \(String(format: "%.1f", delay)) s (attempt \(attempt) of \(attempts))"
        lock.lock()
        defer { lock.unlock() }
        if bars && drawnLines > 0 {
            // Above the bars, which are drawn again below it.
            Console.write("\u{1B}[\(drawnLines)F\u{1B}[J" + terminalSafe(note) + "\n", to: STDERR_FILENO)
            drawnLines = 0
        } else {
            Console.error(note)
        }
    }

    func started(_ url: String, total: Int64?, resumedAt: Int64) {
        let name = URL(string: url)?.lastPathComponent ?? url
        update {
            lines.removeAll { $0.key == url }
            lines.append(
                Line(
                    key: url, name: name, work: .transfer(total: total, received: resumedAt, resumedAt: resumedAt),
                    started: Date()))
        }
    }

    func received(_ url: String, bytes: Int64) {
        update(force: false) {
            guard let index = lines.firstIndex(where: { $0.key == url }),
                case .transfer(let total, _, let resumedAt) = lines[index].work
            else { return }
            lines[index].work = .transfer(total: total, received: bytes, resumedAt: resumedAt)
        }
    }

    func finished(_ url: String) {
        update { lines.removeAll { $0.key == url } }
    }

    func recognizing(_ name: String, read: Int, total: Int) {
        let key = "ocr " + name
        // A page takes a good part of a second: each is drawn.
        update {
            guard read < total else {
                lines.removeAll { $0.key == key }
                return
            }
            if let index = lines.firstIndex(where: { $0.key == key }) {
                lines[index].work = .recognition(read: read, total: total)
            } else {
                let shown = name.contains("/") ? (name as NSString).lastPathComponent : name
                lines.append(Line(key: key, name: shown, work: .recognition(read: read, total: total), started: Date()))
            }
        }
    }

    /// A callback for (done, total) drawn as a line of its own, `label` ("indexing").
    func counter(_ label: String) -> @Sendable (Int, Int) -> Void {
        { done, total in
            self.update(force: done == 0 || done == total) {
                guard done < total else {
                    self.lines.removeAll { $0.key == label }
                    return
                }
                if let index = self.lines.firstIndex(where: { $0.key == label }) {
                    self.lines[index].work = .count(done: done, total: total)
                } else {
                    self.lines.append(
                        Line(key: label, name: label, work: .count(done: done, total: total), started: Date()))
                }
            }
        }
    }

    private func update(force: Bool = true, _ change: () -> Void) {
        lock.lock()
        defer { lock.unlock() }
        change()
        guard bars else { return }
        let now = Date()
        guard force || now.timeIntervalSince(lastDraw) > 0.1 else { return }
        lastDraw = now
        var output = drawnLines > 0 ? "\u{1B}[\(drawnLines)F" : ""
        for line in lines {
            output += "\u{1B}[2K" + Self.text(line, now: now) + "\n"
        }
        if lines.count < drawnLines {
            output += String(repeating: "\u{1B}[2K\n", count: drawnLines - lines.count)
            output += "\u{1B}[\(drawnLines - lines.count)F"
        }
        drawnLines = lines.count
        Console.write(output, to: STDERR_FILENO)
    }

    private static func text(_ line: Line, now: Date) -> String {
        let elapsed = max(now.timeIntervalSince(line.started), 0.001)
        let safe = terminalSafe(line.name)
        let name = safe.count > 24 ? String(safe.prefix(23)) + "…" : padded(safe, 24)
        func bar(_ fraction: Double) -> String {
            let width = 24
            let filled = Int(min(1, max(0, fraction)) * Double(width))
            return String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        }
        func left(_ seconds: Double) -> String {
            let seconds = Int(seconds.rounded())
            return String(format: "%d:%02d left", seconds / 60, seconds % 60)
        }
        switch line.work {
        case .transfer(let total, let received, let resumedAt):
            let rate = Double(received - resumedAt) / elapsed
            guard let total, total > 0 else {
                return "\(name) \(formatBytes(received))  \(formatBytes(Int64(rate)))/s"
            }
            let fraction = min(1, Double(received) / Double(total))
            let eta = rate > 0 ? Int(Double(total - received) / rate) : 0
            return
                "\(name) \(bar(fraction)) \(Int(fraction * 100))%  \(formatBytes(received))/\(formatBytes(total))  \(formatBytes(Int64(rate)))/s  ETA \(eta)s"
        case .recognition(let read, let total):
            let rate = Double(read) / elapsed
            let eta = rate > 0 ? "  " + left(Double(total - read) / rate) : ""
            return
                "\(name) \(bar(Double(read) / Double(max(total, 1)))) OCR \(read)/\(total) pages  \(String(format: "%.2f", rate)) pages/s\(eta)"
        case .count(let done, let total):
            return "\(name) \(bar(Double(done) / Double(max(total, 1)))) \(done)/\(total)"
        }
    }
}

/// Ctrl-C during a download: partial files stay (with their validators) for the next run.
func installInterruptHandler(
    _ global: GlobalOptions, saying kept: String = "partial downloads are kept: run the same command again to resume"
) {
    signal(SIGINT, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
    source.setEventHandler {
        Console.error("\nerror: interrupted; \(kept)")
        Interruption.exit(130)
    }
    source.resume()
    InterruptSource.shared.keep(source)
}

private final class InterruptSource: @unchecked Sendable {
    static let shared = InterruptSource()
    private var sources: [any DispatchSourceSignal] = []
    private let lock = NSLock()

    func keep(_ source: any DispatchSourceSignal) {
        lock.lock()
        sources.append(source)
        lock.unlock()
    }
}
