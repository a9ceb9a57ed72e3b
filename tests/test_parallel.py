"""Sharded FDTD and FDFD (emjax.parallel): equal to one device, on forced CPU devices and
across two processes; placement, memory estimate per device, start-up and the command line.

Several devices need ``XLA_FLAGS=--xla_force_host_platform_device_count=N`` before
JAX starts, so those checks run this file as a script in a subprocess
(``python tests/test_parallel.py CHECK``) that prints one JSON document; the tests
assert on it. References are single-device runs of the same scenario.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from emjax.errors import SetupError
from emjax.parallel import forced_cpu_environment
from emjax.validation import parallel as vp

HERE = Path(__file__)


def _script(check: str, devices: int = 4, timeout: float = 600) -> dict:
    proc = subprocess.run([sys.executable, str(HERE), check], env=forced_cpu_environment(devices),
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------- one host, 4 devices


def test_sharding_case_matches_single_device():
    """`emjax validate sharding`: 1,000 float32 steps, CPML straddling shard boundaries;
    and an FDFD solve sharded over the same four devices."""
    recs = vp.sharding(steps=1000)
    by = {r["metric"].split(" ")[0]: r for r in recs}
    assert all(r["pass"] for r in recs), recs
    assert by["fields_rel_error"]["value"] <= 1e-6, by["fields_rel_error"]
    assert by["worst_rel_error"]["value"] <= 1e-6, by["worst_rel_error"]
    assert by["field_scale"]["value"] > 1.0  # the fields compared are not all zero
    assert by["fields_rel_error"]["devices"] == "4 x cpu"
    # Dispersive spheres (replicated boxes) across shard boundaries, float64: rounding.
    assert by["dispersive_rel_error"]["value"] <= 1e-9, by["dispersive_rel_error"]
    # FDFD: the sharded solve (operator, right-hand side and Krylov vectors split along
    # x) reaches the tolerance and the single-device solution within it.
    tol = by["fdfd_rel_error"]["limit"]
    assert by["fdfd_converged"]["value"] <= tol
    assert by["fdfd_rel_error"]["value"] <= tol, by["fdfd_rel_error"]
    assert "'d'" in by["fdfd_rel_error"]["sharding"]


@pytest.mark.slow
def test_placement_memory_and_run_on_four_devices():
    """Placement, per-device memory, and sim.run / resume sharded over 4 CPU devices.

    Equality is asserted where the issue asks for it: the fields (here through every
    field monitor) within 1e-6 relative in float32. The energy monitor is a global sum,
    which sharding evaluates as per-device partial sums plus an all-reduce: another
    order of float32 additions, so it differs at the float32 rounding level (2.7e-6
    measured) and gets a reassociation bound; in float64 the same comparison gives
    ~3e-15, which a halo bug could not.
    """
    out = _script("layout")
    assert out["device_count"] == 4
    # Fields split along x; x-face psi slabs (thin along x) along y; tables replicated.
    assert out["E_spec"] == ["d", None, None]
    assert out["psi_x_spec"] == [None, "d", None]
    assert out["psi_y_spec"] == ["d", None, None]
    assert out["table_spec"] == []
    assert out["shard_shapes"] == [[8, 24, 20]] * 4
    assert out["y_axis_spec"] == [None, "d", None]
    # Errors that name the fix.
    assert "multiple of 4" in out["uneven"] and "30 samples along x" in out["uneven"]
    assert "devices = 5" in out["too_many"]
    # Per-device estimate: the placed arrays exactly, and XLA's own memory analysis of
    # the compiled sharded chunk (vacuum, CPML, a dipole) within 10%.
    for row in out["memory"]:
        assert abs(row["placed_est"] / row["placed"] - 1) < 0.01, row
        assert abs(row["estimate"] / row["xla"] - 1) < 0.10, row
    # sim.run(devices=4): every monitor of the fields (probes, DFT, snapshots) equals
    # the single-device run within 1e-6 (in fact bitwise: the halo exchange moves values,
    # it does not change the arithmetic of any cell).
    assert out["run_rel_error"] <= 1e-6, out["run_errors"]
    # The energy is one global sum of ~1e5 products: sharded, each device sums its part
    # and an all-reduce adds the partial sums, a different order of float32 additions
    # (measured 2.7e-6 relative after 60 steps). 1e-4 is far below the worst case of a
    # reordered float32 sum of n ~ 1e5 terms, (n - 1) eps ~ 6e-3, and the fields that
    # feed the sum are compared exactly above. Float64 below shows it is only the order.
    assert out["energy_rel_error"] <= 1e-4, out["run_errors"]
    # A sharded checkpoint resumes to the single-device numbers; in float64, so that the
    # energy's reassociation shrinks to ~1e-15 with everything else.
    assert out["resume_dtype"] == "float64"
    assert out["resume_rel_error"] <= 1e-12, out["resume_errors"]
    assert out["monitors"] == ["dft", "energy", "probe", "snap"]


def test_dispersive_background_sharded():
    """A dispersive background sharded over 4 CPU devices: its boxes split along x with
    the fields, the run equal to one device's, the per-device estimate exact on the
    placed arrays; and with a dispersive sphere (boxes replicated), no all-gather of a
    whole field in the compiled step."""
    out = _script("dispersive")
    # background: p (slots, nx, ny, nz) and the medium rows split along x like E
    assert out["bg_P_spec"] == [None, "d", None, None]
    assert out["bg_idx_spec"] == ["d", None, None]
    assert out["bg_P_shard"] == [1, 4, 12, 12]
    # sphere: replicated (its box spans part of x only)
    assert out["sphere_P_spec"] == [] and out["sphere_idx_spec"] == []
    # float64, 60 steps: the sharded background run equals one device's to rounding
    assert out["bg_rel_error"] <= 1e-11, out["bg_errors"]
    assert out["bg_scale"] > 0
    # per device: p and j exactly (split: a quarter of the background's; the sphere's
    # whole), all placed arrays within 3% (the rest: 1D CPML profiles and small tables
    # that the estimate leaves out, 1.6% of this small grid; the background's p alone is
    # 17% of it)
    for row in out["memory"]:
        assert row["polarization_est"] == row["polarization"], row
        assert abs(row["placed_est"] / row["placed"] - 1) < 0.03, row
    # the step's collectives: halo planes and box planes, never a whole field (added in
    # place, the box patches made XLA gather all of E, three per step, before the fold)
    assert out["gathers"], "no all-gather found: the HLO pattern no longer matches"
    assert out["full_gathers"] == [], out["full_gathers"]


# ---------------------------------------------------------------- two processes


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_two_processes_match_single_process(tmp_path):
    """Two processes of two CPU devices each, joined by jax.distributed on 127.0.0.1."""
    steps, port, out = 200, _free_port(), tmp_path / "two.npz"
    env = forced_cpu_environment(2)
    procs = [subprocess.Popen([sys.executable, "-m", "emjax.validation.parallel", "worker",
                               str(i), "2", str(port), str(out), str(steps)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(2)]
    errs = []
    for p in procs:
        try:
            _, err = p.communicate(timeout=600)
        except subprocess.TimeoutExpired:
            p.kill()
            _, err = p.communicate()
        errs.append(err)
    if any(p.returncode for p in procs):
        text = "\n".join(e[-3000:] for e in errs)
        if "collective" in text.lower() and "not implemented" in text.lower():
            pytest.skip(f"this JAX build cannot run CPU collectives across processes: {text}")
        raise AssertionError(text)
    data = np.load(out)
    assert int(data["process_count"]) == 2 and int(data["device_count"]) == 4
    from emjax.errors import EmjaxWarning

    with pytest.warns(EmjaxWarning, match="cells per shortest wavelength"):  # a coarse cube
        ref = vp.final_state(vp.scenario(steps))
    errors = vp.compare(ref, {k: data[k] for k in ref})
    assert max(errors.values()) <= 1e-6, errors
    assert np.max(np.abs(ref["Ez"])) > 1.0


# ------------------------------------------------------------ start-up, one device


_LAUNCH_VARS = ("SLURM_JOB_ID", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                "EMJAX_COORDINATOR", "EMJAX_NUM_PROCESSES", "EMJAX_PROCESS_ID")


@pytest.fixture
def no_launcher(monkeypatch):
    for k in _LAUNCH_VARS:
        monkeypatch.delenv(k, raising=False)
    return monkeypatch


def test_launcher_detection(no_launcher):
    from emjax import parallel

    assert parallel.launcher() is None
    no_launcher.setenv("SLURM_JOB_ID", "42")
    no_launcher.setenv("SLURM_NTASKS", "1")
    assert parallel.launcher() is None  # one task: nothing to join
    no_launcher.setenv("SLURM_NTASKS", "8")
    assert parallel.launcher() == "SLURM"
    no_launcher.delenv("SLURM_JOB_ID")
    no_launcher.setenv("OMPI_COMM_WORLD_SIZE", "2")
    assert parallel.launcher() == "Open MPI"


def test_initialize_single_process_is_a_no_op(no_launcher):
    from emjax import parallel

    assert parallel.initialize() is False


def test_initialize_needs_all_three_explicit_values(no_launcher):
    from emjax import parallel

    with pytest.raises(SetupError, match="num_processes=None"):
        parallel.initialize(coordinator_address="127.0.0.1:1234")
    no_launcher.setenv("EMJAX_COORDINATOR", "127.0.0.1:1234")
    no_launcher.setenv("EMJAX_NUM_PROCESSES", "2")
    with pytest.raises(SetupError, match="process_id=None"):
        parallel.initialize()


def test_select_devices_errors():
    import jax

    from emjax import parallel

    n = jax.device_count()
    assert parallel.select_devices(None) == jax.devices()
    assert parallel.select_devices(1) == jax.devices()[:1]
    with pytest.raises(SetupError, match=f"devices = {n + 1}"):
        parallel.select_devices(n + 1)
    with pytest.raises(SetupError, match="device id 999"):
        parallel.select_devices([999])


def _cli(args, capsys):
    from emjax import cli

    rc = cli.main(args)
    return rc, capsys.readouterr()


def test_cli_devices(tmp_path, capsys):
    import jax

    scen = tmp_path / "s.toml"
    vp.scenario(steps=6).save(scen)
    rc, cap = _cli(["run", str(scen), "--devices", str(jax.device_count() + 1), "--dry-run"],
                   capsys)
    assert rc == 2 and "error:" in cap.err and "Traceback" not in cap.err
    rc, cap = _cli(["run", str(scen), "--devices", "1", "--no-progress", "-o",
                    str(tmp_path / "o.h5"), "--figures", str(tmp_path)], capsys)
    assert rc == 0, cap.err
    assert "memory per device" in cap.out and (tmp_path / "o.h5").is_file()


def test_cli_distributed_without_launcher(tmp_path, capsys, no_launcher):
    scen = tmp_path / "s.toml"
    vp.scenario(steps=6).save(scen)
    rc, cap = _cli(["run", str(scen), "--distributed", "--dry-run"], capsys)
    assert rc == 2 and "EMJAX_COORDINATOR" in cap.err


# --------------------------------------------------------------- subprocess side


def _layout() -> dict:
    import jax

    from emjax import parallel
    from emjax.fdtd.memory import estimate_per_device
    from emjax.fdtd.solver import FDTDSolver
    from emjax.model import EnergyMonitor, FieldSnapshot

    out: dict = {"device_count": jax.device_count()}
    sim = vp.scenario(steps=60)
    solver = FDTDSolver(sim, chunk=20, devices=4)
    state, consts = solver.init_state(), solver.constants()
    spec = lambda a: [None if p is None else str(p) for p in a.sharding.spec]  # noqa: E731
    out["E_spec"] = spec(state.E[0])
    out["psi_x_spec"] = spec(state.psi_E["x_low"][1])
    out["psi_y_spec"] = spec(state.psi_E["y_low"][0])
    out["table_spec"] = spec(consts["cE"].a)
    out["shard_shapes"] = [list(s.data.shape) for s in state.E[0].addressable_shards]
    y = FDTDSolver(sim, chunk=20, devices=4, shard_axis="y").init_state()
    out["y_axis_spec"] = spec(y.E[0])
    odd = vp.scenario(steps=10).model_copy(update={"domain": sim.domain.model_copy(
        update={"shape": (30, 24, 20)})})
    for key, call in (("uneven", lambda: FDTDSolver(odd, devices=4)),
                      ("too_many", lambda: FDTDSolver(sim, devices=5))):
        try:
            call()
            out[key] = "no error"
        except SetupError as e:
            out[key] = str(e)
    out["memory"] = []
    # Vacuum (uniform coefficients): XLA on the CPU materialises gathered coefficient
    # arrays that the GPU fuses, so only the sharding terms are comparable here.
    for shape, k in (((64, 48, 40), 4), ((96, 32, 32), 2)):
        s = vp.scenario(steps=8).model_copy(update={
            "domain": sim.domain.model_copy(update={"shape": shape}), "monitors": [],
            "structures": []})
        sol = FDTDSolver(s, chunk=4, devices=k)
        st, c = sol.init_state(), sol.constants()
        placed = max(parallel.per_device_bytes([st, c]).values())
        ma = sol._compile(4).lower(*sol.chunk_args(st, 0, 4)) \
            .compile().memory_analysis()
        xla = (ma.argument_size_in_bytes + ma.output_size_in_bytes - ma.alias_size_in_bytes
               + ma.temp_size_in_bytes)
        est = estimate_per_device(s, k, "x", chunk=4)
        out["memory"].append({
            "shape": shape, "devices": k, "placed": placed, "xla": xla,
            "estimate": est["total"],
            "placed_est": est["fields"] + est["coefficients"] + est["psi"] + est["monitors"]})
    # Every monitor type through sim.run, and a sharded checkpoint + resume.
    full = sim.model_copy(update={"monitors": [
        *sim.monitors, EnergyMonitor(name="energy", interval=3),
        FieldSnapshot(name="snap", center=(0, 0, 0), size=(10e-3, 0, 6e-3), interval=7)]})
    ref = full.run(progress=False)
    sharded = full.run(progress=False, devices=4, chunk=20)
    import tempfile

    short = full.model_copy(update={"steps": 30, "dtype": "float64"})
    with tempfile.TemporaryDirectory() as tmp:
        ck = Path(tmp) / "c.h5"
        first = FDTDSolver(short, chunk=10, devices=4)
        first.run(progress=False, checkpoint_every=20, checkpoint_path=ck)
        # the same sharded solver resumes (its chunk compiled once): run() reads the
        # state from the file and places it on the four devices
        resumed = first.run(progress=False, resume=ck)
        ref30 = short.run(progress=False)

    def errors(a, b):
        out_ = {}
        for name, md in a.monitors.items():
            for comp, arr in md.data.items():
                x, y_ = np.asarray(arr), np.asarray(b[name].data[comp])
                scale = np.max(np.abs(x)) or 1.0
                out_[f"{name}.{comp}"] = float(np.max(np.abs(y_ - x)) / scale)
        return out_

    out["run_errors"] = errors(ref, sharded)
    out["energy_rel_error"] = out["run_errors"]["energy.energy"]
    out["run_rel_error"] = max(v for k, v in out["run_errors"].items()
                               if not k.startswith("energy."))
    out["resume_dtype"] = short.dtype
    out["resume_errors"] = errors(ref30, resumed)
    out["resume_rel_error"] = max(out["resume_errors"].values())
    out["monitors"] = sorted(sharded.monitors)
    return out


def _dispersive() -> dict:
    import re

    from emjax import parallel
    from emjax.fdtd.memory import estimate_per_device
    from emjax.fdtd.solver import FDTDSolver
    from emjax.model import PointDipole
    from emjax.model.dispersion import DebyePole, PoleMedium

    spec = lambda a: [None if p is None else str(p) for p in a.sharding.spec]  # noqa: E731
    out: dict = {}
    water = PoleMedium(eps_inf=4.9, poles=[DebyePole(delta_eps=74.0, tau=8.3e-12)])
    base = vp.scenario(steps=60, dtype="float64")
    bg = base.model_copy(update={
        "name": "bg", "background": water, "structures": [], "sources": [
            PointDipole(position=(0.0, 0.5e-3, 0.5e-3), polarization="z",
                        waveform=base.sources[0].waveform.model_copy(update={"f0": 5e9,
                                                                           "fwidth": 3e9}))],
        "domain": base.domain.model_copy(update={"shape": (16, 12, 12)}),
        "boundary": base.boundary.model_copy(update={
            "x": base.boundary.x.model_copy(update={"thickness": 4}),
            "y": base.boundary.y.model_copy(update={"thickness": 3}),
            "z": base.boundary.z.model_copy(update={"thickness": 3})}),
        "monitors": [base.monitors[0].model_copy(update={"positions": [
            (0.0, 0.0, 0.0), (-0.5e-3, 1e-3, 0.0), (2.5e-3, -1e-3, 1e-3)]}),
            base.monitors[1].model_copy(update={"size": (6e-3, 4e-3, 0.0)})]})
    sol = FDTDSolver(bg, chunk=20, devices=4)
    st, c = sol.init_state(), sol.constants()
    out["bg_P_spec"] = spec(st.disp[0]["P"])
    out["bg_idx_spec"] = spec(c["disp"][0].idx)
    out["bg_P_shard"] = list(st.disp[0]["P"].addressable_shards[0].data.shape)
    ref, sharded = vp.final_state(bg, chunk=20), vp.final_state(bg, devices=4, chunk=20)
    # against the largest E (or H) of any component: Hz is nearly zero by symmetry
    scale = {f: max(np.max(np.abs(v)) for k, v in ref.items() if f in k) for f in "EH"}
    errors = {k: float(np.max(np.abs(sharded[k] - v)) / scale["H" if "H" in k else "E"])
              for k, v in ref.items()}
    out["bg_errors"] = errors
    out["bg_rel_error"] = max(errors.values())
    out["bg_scale"] = float(scale["E"])
    sphere = vp.dispersive_scenario(steps=20)
    out["memory"] = []
    for sim in (bg, sphere):
        s_ = FDTDSolver(sim, chunk=20, devices=4)
        st_, c_ = s_.init_state(), s_.constants()
        placed = max(parallel.per_device_bytes([st_, c_]).values())
        est = estimate_per_device(sim, 4, "x", chunk=20)
        out["memory"].append({
            "name": sim.name, "placed": placed, "placed_est": sum(
                est[k] for k in ("fields", "coefficients", "psi", "monitors", "polarization")),
            "polarization": max(parallel.per_device_bytes(st_.disp).values()),
            "polarization_est": est["polarization"]})
    ssol = FDTDSolver(sphere, chunk=20, devices=4)
    st, c = ssol.init_state(), ssol.constants()
    out["sphere_P_spec"] = spec(st.disp[0]["P"])
    out["sphere_idx_spec"] = spec(c["disp"][0].idx)
    hlo = ssol._compile(20).lower(*ssol.chunk_args(st, 0, 20)) \
        .compile().as_text()
    whole = ",".join(map(str, ssol.setup.grid.shape))
    gathers = re.findall(r"= (\w+\[[\d,]*\])\S* all-gather(?:-start)?\(", hlo)
    out["gathers"] = sorted(set(gathers))
    out["full_gathers"] = [g for g in gathers if g.endswith(f"[{whole}]")]
    return out


if __name__ == "__main__":
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    checks = {"layout": _layout, "dispersive": _dispersive}
    print(json.dumps(checks[sys.argv[1]](), default=str))


def test_initialize_names_launcher_jax_cannot_read(no_launcher):
    """A launcher with several tasks that JAX's cluster detection cannot read (MPICH's
    PMI variables alone) gives a SetupError naming the launcher and the EMJAX_* way out."""
    import jax

    from emjax import parallel

    def refuse(**kw):
        raise ValueError("coordinator_address should be defined.")

    no_launcher.setattr(jax.distributed, "initialize", refuse)
    no_launcher.setattr(parallel, "_initialized", lambda: False)
    no_launcher.setenv("PMI_SIZE", "4")
    with pytest.raises(SetupError, match=r"MPICH/PMI runs several tasks.*EMJAX_COORDINATOR"):
        parallel.initialize()
