import Foundation
import MarginCore

/// A page drawn for the reader, in a child process with the text extractor's time and memory
/// limits: a 100 KB PDF can hold a page that takes minutes and gigabytes to draw, and a server
/// must answer it with an error while it goes on serving everyone else.
///
/// At most one render a core runs at once (others wait their turn without holding a thread); a
/// render is stopped (its child killed) when its time is up, when whoever asked for it is gone
/// (`StopSignal`), or when the process is shutting down (`stopAll`).
public enum IsolatedRender {
    public static let helperCommand = "__render-page"
    /// The scheduling priority a render child lowers itself to (nice).
    static let renderNiceness: Int32 = 10
    /// How long a render runs at that priority; then it only takes what no one else wants
    /// (`SCHED_IDLE`), unless `MARGIN_PLAIN` names `idle-renders`. A page drawn in a second is
    /// an ordinary one; one still drawing after it is the kind built to exhaust readers: two of
    /// them asked without pause beside 32 users of `serve` put the users' p99 at 1.00–1.28× the
    /// run without them at nice 10, 1.01–1.22× so (bench/hostile-load.py).
    static let idleAfter: DispatchTimeInterval = .seconds(1)
    static let idlesLongRenders = FastPaths.isOn("idle-renders")
    /// Long renders (still drawing after `idleAfter`) take turns: one draws, the others are
    /// stopped (SIGSTOP) until it ends, their time limit running on; `MARGIN_PLAIN=long-render-turns`
    /// lets them all draw. Two such pages asked without pause beside 32 users drew side by side
    /// on both cores' idle time, and what they still took (their page faults, the caches they
    /// empty) cost the users' p99 up to a third (bench/hostile-load.py).
    static let takesTurns = idlesLongRenders && FastPaths.isOn("long-render-turns")
    /// And the one drawing waits, stopped, while the server answers anything else
    /// (`answering`); `MARGIN_PLAIN=long-render-waits` lets it draw on idle time as before. On
    /// idle time alone it still cost 32 users' p99 1.21–1.30× the run without it (what it does
    /// to the caches and memory the server shares), and 1.05× when stopped (bench/hostile-load.py).
    static let waitsForAnswers = takesTurns && FastPaths.isOn("long-render-waits")

    /// Tells the long renders that a request other than a page's image began (`true`) or
    /// ended: while any is under way, the drawing one waits (`waitsForAnswers`).
    public static func answering(_ began: Bool) {
        guard waitsForAnswers else { return }
        LongRenders.shared.answering(began)
    }

    /// Linux's `SCHED_IDLE` (sched.h defines it only under `_GNU_SOURCE`, which Swift's import
    /// of the C library leaves out).
    static let schedIdle: Int32 = 5

    /// Has every thread of process `pid` run only when nothing else wants a core.
    static func runWhenIdle(_ pid: pid_t) {
        for task in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? [] {
            guard let thread = pid_t(task) else { continue }
            var parameters = sched_param()
            parameters.sched_priority = 0
            _ = sched_setscheduler(thread, schedIdle, &parameters)
        }
    }

    /// Runs in the child: reads one request on stdin (path, password, page, format, dpi), draws
    /// the page and answers on stdout: 0, the resolution used and the bytes; or 1 and a message.
    public static func runHelper(_ arguments: [String], configuration: Configuration) -> Int32 {
        PopplerIsolation.becomeChild(configuration)
        // Drawing yields to answering: the server's requests come first on a busy machine (a page
        // built to take minutes takes only what the others leave), idle cores are the render's.
        // Linux keeps it per thread: every thread of the child (the drawing one is this one).
        for task in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? ["0"] {
            if let thread = id_t(task) {
                setpriority(__priority_which_t(PRIO_PROCESS.rawValue), thread, renderNiceness)
            }
        }
        let input = FrameReader(descriptor: 0)
        guard arguments.isEmpty, let path = input.field(), let password = input.field(), let pageField = input.field(),
            let formatField = input.field(), let dpiField = input.field(),
            let number = Int(String(decoding: pageField, as: UTF8.self)),
            let format = RenderFormat(rawValue: String(decoding: formatField, as: UTF8.self)),
            let dpi = Double(String(decoding: dpiField, as: UTF8.self))
        else {
            FileHandle.standardError.write(Data("usage: margin \(helperCommand) (a request on stdin)\n".utf8))
            return 2
        }
        var answer = FrameWriter()
        do {
            let document = try PDFEngines.current.open(
                path: String(decoding: path, as: UTF8.self),
                password: password.isEmpty ? nil : String(decoding: password, as: UTF8.self))
            let drawn = try drawPage(try document.page(number), format: format, dpi: dpi)
            answer.byte(0)
            answer.field(drawn.resolution)
            answer.field(bytes: drawn.data)
        } catch PDFError.passwordRequired, PDFError.wrongPassword {
            // Not poppler's failure: the book's password isn't known here (said by the parent).
            answer = FrameWriter()
            answer.byte(2)
        } catch {
            answer = FrameWriter()
            answer.byte(1)
            answer.field(error.localizedDescription)
        }
        return answer.flush(to: 1) ? 0 : 1
    }

    /// A page as PNG (at `dpi`, capped as `render` caps it) or SVG: the bytes and the
    /// resolution used ("vector" for SVG).
    static func drawPage(_ page: any PDFPage, format: RenderFormat, dpi: Double) throws -> (
        data: Data, resolution: String
    ) {
        let (width, height) = page.size
        let largest = Double(RenderRequest.maxPixels) * 72 / max(width, height, 1)
        let used = min(dpi, RenderRequest.maxDPI, largest)
        if format == .png { return (try page.renderPNG(dpi: used), String(format: "%.2f", used)) }
        let temporary = NSTemporaryDirectory() + "margin-page-\(UUID().uuidString).svg"
        defer { try? FileManager.default.removeItem(atPath: temporary) }
        try page.render(to: temporary, format: .svg)
        return (try Data(contentsOf: URL(fileURLWithPath: temporary)), "vector")
    }

    /// Has a child draw the page: waits for a free core, then for the child, on a thread of its
    /// own. Throws `CancellationError` when stopped by `stop` or the task's cancellation.
    static func draw(
        helper: String, path: String, password: String?, page: Int, format: RenderFormat, dpi: Double,
        configuration: Configuration, stop: StopSignal?
    ) async throws -> (data: Data, resolution: String) {
        try await RenderSlots.shared.acquire()
        defer { RenderSlots.shared.release() }
        try Task.checkCancellation()
        if stop?.isStopped == true || Live.shared.isShuttingDown { throw CancellationError() }
        let child = try Child(helper, [helperCommand])
        Live.shared.insert(child.pid)
        defer { Live.shared.remove(child.pid) }
        var request = FrameWriter()
        request.field(path)
        request.field(password ?? "")
        request.field(String(page))
        request.field(format.rawValue)
        request.field(String(dpi))
        let sent = request
        let seconds = configuration.popplerTimeLimit(pages: 1)
        let pid = child.pid
        let ended = WriteFlag()
        let timedOut = WriteFlag()
        stop?.onStop {
            ended.set()
            kill(pid, SIGKILL)
        }
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now() + seconds)
        timer.setEventHandler {
            timedOut.set()
            kill(pid, SIGKILL)
        }
        timer.resume()
        defer { timer.cancel() }
        // A long render yields entirely; never once the child is reaped (its pid may be reused).
        let reaped = WriteFlag()
        var idling: (any DispatchSourceTimer)?
        if idlesLongRenders {
            let timer = DispatchSource.makeTimerSource(queue: .global())
            timer.schedule(deadline: .now() + idleAfter)
            timer.setEventHandler {
                reaped.unlessSet {
                    runWhenIdle(pid)
                    if takesTurns { LongRenders.shared.started(pid) }
                }
            }
            timer.resume()
            idling = timer
        }
        defer { idling?.cancel() }
        let answer: RenderAnswer? = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                Thread.detachNewThread {
                    guard sent.flush(to: child.input) else {
                        continuation.resume(returning: nil)
                        return
                    }
                    continuation.resume(returning: child.output.renderAnswer())
                }
            }
        } onCancel: {
            ended.set()
            kill(pid, SIGKILL)
        }
        reaped.set()
        // Before the child is reaped: a pid the long renders still hold is a live child's.
        if takesTurns { LongRenders.shared.ended(pid) }
        let status = child.end()
        if ended.isSet || Live.shared.isShuttingDown { throw CancellationError() }
        if timedOut.isSet {
            throw MarginError.popplerLimit(
                "poppler took longer than \(Int(seconds)) s to draw page \(page) (a PDF built to exhaust readers?)")
        }
        switch answer {
        case .image(let resolution, let data)?: return (data, resolution)
        case .failure(let message)?: throw MarginError.popplerLimit("poppler could not draw page \(page): \(message)")
        case .locked?: throw PDFError.passwordRequired
        case nil:
            let how = status.exited ? "exit \(status.code)" : "signal \(status.code)"
            throw MarginError.popplerLimit(
                "poppler stopped while drawing page \(page) (\(how); memory limit \(configuration.popplerMemoryLimit >> 20) MB)"
            )
        }
    }

    /// Kills every render under way and refuses new ones: the process is stopping.
    public static func stopAll() { Live.shared.killAll() }
}

/// Says a render is no longer wanted (its client went away): the child is killed at once.
public final class StopSignal: @unchecked Sendable {
    private let lock = NSLock()
    private var stopped = false
    private var actions = [@Sendable () -> Void]()

    public init() {}

    public var isStopped: Bool { lock.withLock { stopped } }

    /// Stops: runs every action registered, once.
    public func stop() {
        let run: [@Sendable () -> Void] = lock.withLock {
            guard !stopped else { return [] }
            stopped = true
            defer { actions = [] }
            return actions
        }
        run.forEach { $0() }
    }

    /// Runs `action` on `stop` (at once when stopped already).
    public func onStop(_ action: @escaping @Sendable () -> Void) {
        let now: Bool = lock.withLock {
            if stopped { return true }
            actions.append(action)
            return false
        }
        if now { action() }
    }
}

/// One render a core, the rest waiting their turn (without holding a thread).
private final class RenderSlots: @unchecked Sendable {
    static let shared = RenderSlots(ProcessInfo.processInfo.activeProcessorCount)
    private let lock = NSLock()
    private var free: Int
    private var waiting = [CheckedContinuation<Void, Never>]()

    init(_ count: Int) { free = max(1, count) }

    func acquire() async throws {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now: Bool = lock.withLock {
                if free > 0 {
                    free -= 1
                    return true
                }
                waiting.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    func release() {
        let next: CheckedContinuation<Void, Never>? = lock.withLock {
            if waiting.isEmpty {
                free += 1
                return nil
            }
            return waiting.removeFirst()
        }
        next?.resume()
    }
}

/// The renders past `IsolatedRender.idleAfter`: one draws at a time, the others wait stopped
/// (SIGSTOP), in order. A pid is handed in while its child runs and taken out before it is
/// reaped, so a signal sent here never reaches another process.
private final class LongRenders: @unchecked Sendable {
    static let shared = LongRenders()
    private let lock = NSLock()
    private var drawing: pid_t?
    private var stopped = [pid_t]()
    /// Requests under way other than pages' images (`IsolatedRender.answering`).
    private var answers = 0

    func started(_ pid: pid_t) {
        lock.withLock {
            if drawing == nil {
                drawing = pid
                if answers > 0 { kill(pid, SIGSTOP) }
            } else {
                stopped.append(pid)
                kill(pid, SIGSTOP)
            }
        }
    }

    func ended(_ pid: pid_t) {
        lock.withLock {
            if drawing == pid {
                drawing = stopped.isEmpty ? nil : stopped.removeFirst()
                if let next = drawing, answers == 0 { kill(next, SIGCONT) }
            } else {
                stopped.removeAll { $0 == pid }
            }
        }
    }

    /// The drawing one stops as the first request under way begins, and goes on as the last ends.
    func answering(_ began: Bool) {
        lock.withLock {
            answers += began ? 1 : -1
            guard let drawing else { return }
            if began, answers == 1 {
                kill(drawing, SIGSTOP)
            } else if !began, answers == 0 {
                kill(drawing, SIGCONT)
            }
        }
    }
}

/// The render children alive, to stop them all at shutdown.
private final class Live: @unchecked Sendable {
    static let shared = Live()
    private let lock = NSLock()
    private var pids = Set<pid_t>()
    private var stopping = false

    var isShuttingDown: Bool { lock.withLock { stopping } }
    func insert(_ pid: pid_t) { lock.withLock { _ = pids.insert(pid) } }
    func remove(_ pid: pid_t) { lock.withLock { _ = pids.remove(pid) } }

    func killAll() {
        let all: Set<pid_t> = lock.withLock {
            stopping = true
            return pids
        }
        for pid in all { kill(pid, SIGKILL) }
    }
}

/// What a render child answered.
enum RenderAnswer {
    case image(String, Data)
    case failure(String)
    /// The PDF is encrypted and the password given (if any) doesn't open it.
    case locked
}

extension FrameReader {
    func renderAnswer() -> RenderAnswer? {
        switch byte() {
        case 0:
            guard let resolution = field(), let data = field() else { return nil }
            return .image(String(decoding: resolution, as: UTF8.self), Data(data))
        case 1: return field().map { .failure(String(decoding: $0, as: UTF8.self)) }
        case 2: return .locked
        default: return nil
        }
    }
}
