"""Pictures: the shmem-perf plot and the shmem-prof heatmap (matplotlib, optional).

matplotlib is imported only here, with the non-interactive Agg backend, so the rest of
the package works without it (``pip install 'shmem-tools[plot]'`` brings it in).
"""

from shmem._sizes import format_size


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise RuntimeError("matplotlib is not installed: pip install 'shmem-tools[plot]'") from None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _size_axis(ax, sizes):
    ax.set_xscale("log", base=2)
    if sizes:
        ticks = sorted(set(sizes))
        step = max(1, len(ticks) // 12)
        ticks = ticks[::step]
        ax.set_xticks(ticks)
        ax.set_xticklabels([format_size(t) for t in ticks], rotation=45, fontsize=8)  # as in the tables
    ax.set_xlabel("message size (bytes, log2 scale)")
    ax.grid(True, which="major", alpha=0.3)


def _series(table, variant=None, field="library"):
    pts = [(r["size"], r[field]) for r in table.records
           if (variant is None or r["variant"] == variant) and r[field] is not None and r["size"]]
    pts.sort()
    return [p[0] for p in pts], [p[1] for p in pts]


def plot_perf(tables, path, plan, res):
    """Bandwidth and latency against message size (and all_reduce when measured).
    Returns the panels' titles, axis labels and scales."""
    plt = _pyplot()
    by = {t.name: t for t in tables}
    panels = []
    if "put_bandwidth" in by or "get_bandwidth" in by:
        panels.append("bandwidth")
    if any(k in by for k in ("put_latency", "get_latency", "put_signal_round_trip")):
        panels.append("latency")
    if "all_reduce" in by:
        panels.append("all_reduce")
    if not panels:
        raise RuntimeError("nothing to plot: no bandwidth, latency or all_reduce results")
    fig, axes = plt.subplots(1, len(panels), figsize=(6.2 * len(panels), 5.0), squeeze=False)
    axes = axes[0]
    for ax, panel in zip(axes, panels):
        sizes = []
        if panel == "bandwidth":
            base_done = False
            for op, color in (("put", "tab:blue"), ("get", "tab:orange")):
                t = by.get(f"{op}_bandwidth")
                if t is None:
                    continue
                for variant, style in (("blocking", "-o"), ("nbi", "--s")):
                    x, y = _series(t, variant)
                    if x:
                        ax.plot(x, y, style, color=color, markersize=3, label=f"{op} ({variant})")
                        sizes += x
                if not base_done:
                    x, y = _series(t, "blocking", "baseline")
                    if x:
                        ax.plot(x, y, ":", color="black", linewidth=2, label="baseline: memcpy")
                        base_done = True
            ax.set_yscale("log")
            ax.set_ylabel("bandwidth (MB/s, log scale)")
            ax.set_title("Bandwidth, PE 0 -> PE 1")
        elif panel == "latency":
            colors = {"put_latency": "tab:blue", "get_latency": "tab:orange", "put_signal_round_trip": "tab:green"}
            labels = {"put_latency": "put (blocking)", "get_latency": "get (blocking)",
                      "put_signal_round_trip": "put_signal round trip"}
            for name in ("put_latency", "get_latency", "put_signal_round_trip"):
                t = by.get(name)
                if t is None:
                    continue
                x, y = _series(t)
                if x:
                    ax.plot(x, y, "-o", color=colors[name], markersize=3, label=labels[name])
                    sizes += x
            for name, style, label in (("put_latency", ":", "baseline: ping-pong one way"),
                                       ("get_latency", ":", "baseline: ping-pong one way"),
                                       ("put_signal_round_trip", "-.", "baseline: ping-pong round trip")):
                t = by.get(name)
                if t is None or (name == "get_latency" and "put_latency" in by):
                    continue
                x, y = _series(t, None, "baseline")
                if x:
                    ax.plot(x, y, style, color="black", linewidth=1.5, label=label)
            title = "Latency"
            b = by.get("barrier")
            if b is not None and b.records and b.records[0]["library"] is not None:
                r = b.records[0]
                base = f", flag barrier {r['baseline']:.2f} us" if r["baseline"] else ""
                title += f"\nbarrier_all on {plan['npes']} PEs: {r['library']:.2f} us{base}"
            ax.set_yscale("log")
            ax.set_ylabel("latency (microseconds, log scale)")
            ax.set_title(title, fontsize=10)
        else:
            t = by["all_reduce"]
            x, y = _series(t)
            ax.plot(x, y, "-o", color="tab:red", markersize=3, label="shmem_torch.all_reduce")
            x, yb = _series(t, None, "baseline")
            if x:
                ax.plot(x, yb, ":", color="black", linewidth=2, label="baseline: gloo all_reduce")
            sizes += x
            ax.set_yscale("log")
            ax.set_ylabel("time per all_reduce (microseconds, log scale)")
            ax.set_title(f"all_reduce, float32, {plan['npes']} PEs")
        _size_axis(ax, sizes)
        ax.legend(fontsize=8, loc="upper left")
    lib = res.meta.get("library", "libaclshmem")
    fig.suptitle(f"shmem-perf: {lib}, {plan['npes']} PEs" + (" (quick run)" if plan.get("quick") else ""))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    described = [{"title": ax.get_title(), "xlabel": ax.get_xlabel(), "ylabel": ax.get_ylabel(),
                  "xscale": ax.get_xscale(), "yscale": ax.get_yscale()} for ax in axes]
    plt.close(fig)
    return described


def plot_heatmap(matrix, blocks, frames, frame_labels, path, title, metric):
    """A blocks x frames heatmap (log colour scale) of ``matrix[block][frame]``."""
    plt = _pyplot()
    from matplotlib.colors import LogNorm

    data = [[matrix[b][f] for f in frames] for b in blocks]
    positive = [v for row in data for v in row if v > 0]
    if not positive:
        raise RuntimeError("the profile is empty: no frame has any samples")
    masked = [[v if v > 0 else float("nan") for v in row] for row in data]
    width = min(20.0, 3.0 + 0.55 * len(frames))
    height = min(14.0, 2.5 + 0.28 * len(blocks))
    fig, ax = plt.subplots(figsize=(width, height))
    im = ax.imshow(masked, aspect="auto", interpolation="nearest", cmap="viridis",
                   norm=LogNorm(vmin=min(positive), vmax=max(positive)))
    ax.set_xticks(range(len(frames)))
    ax.set_xticklabels(frame_labels, rotation=60, ha="right", fontsize=8)
    ax.set_yticks(range(len(blocks)))
    ax.set_yticklabels([str(b) for b in blocks], fontsize=8)
    ax.set_xlabel("frame")
    ax.set_ylabel("block")
    ax.set_title(title)
    bar = fig.colorbar(im, ax=ax)
    bar.set_label(f"{metric} (log scale)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_scale(result, path, measures, units, median):
    """shmem-perf --scale: one panel per measure, time against the PE count (both log
    scales), libaclshmem and OSHMEM.  measures, units (measure -> (title, unit, scale)) and
    median(result, library, n, measure) are --scale's own, handed down by _scale, the module
    above this one.  Returns the panels' titles, axis labels and scales."""
    MEASURES, UNITS = measures, units
    plt = _pyplot()
    panels = [m for m in MEASURES if any(median(result, "libaclshmem", n, m) is not None for n in result["pes"])]
    if not panels:
        raise RuntimeError("nothing to plot: no job gave a number")
    cols = min(3, len(panels))
    rows = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(5.4 * cols, 4.4 * rows), squeeze=False)
    flat = [ax for row in axes for ax in row]
    for ax, measure in zip(flat, panels):
        title, unit, _ = UNITS[measure]
        for library, style, color in (("libaclshmem", "-o", "tab:blue"), ("OSHMEM", "--s", "tab:orange")):
            pts = [(n, median(result, library, n, measure)) for n in result["pes"]]
            pts = [(n, v) for n, v in pts if v is not None]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style, color=color, markersize=4,
                        label=result["oshmem"] + " OSHMEM" if library == "OSHMEM" else result["library"])
        ax.set_xscale("log", base=2)
        ax.set_xticks(result["pes"])
        ax.set_xticklabels([str(n) for n in result["pes"]])
        ax.set_yscale("log")
        ax.set_xlabel("PEs (log2 scale)")
        ax.set_ylabel(f"{unit} (log scale)")
        ax.set_title(title, fontsize=9)
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=8, loc="upper left")
    for ax in flat[len(panels):]:
        ax.set_visible(False)
    fig.suptitle(f"shmem-perf --scale: {result['cpus']} CPUs, median of {result['rounds']} round(s)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    described = [{"title": ax.get_title(), "xlabel": ax.get_xlabel(), "ylabel": ax.get_ylabel(),
                  "xscale": ax.get_xscale(), "yscale": ax.get_yscale()} for ax in flat[:len(panels)]]
    plt.close(fig)
    return described
