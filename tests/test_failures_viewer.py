"""Bad input of the viewer (issue 27, item 1): `flexmbs view` and `flexmbs.viewer`, as rows of
(what is given, the message it now prints).  Every option is checked before pyvista is needed, so
the rows run without it; the missing pyvista is simulated (``sys.modules["pyvista"] = None``)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from flexmbs import cli, load_results

ROOT = Path(__file__).resolve().parents[1]
NO_PYVISTA = ('the viewer needs pyvista, which is not installed (import of pyvista halted; None in sys.modules); '
              'install the view extra: pip install "flexmbs[view]"')
FIELDS = "['displacement', 'axial_force', 'none', 'auto'] (the fields of this run; 'none': a colour per body)"
NO_DISPLAY = ("no display to open a window on ($DISPLAY is not set): render off-screen instead, `flexmbs view DIR "
              "--screenshot FILE [--time T]` or `--video FILE.mp4|.gif` (in Python: "
              "Viewer(results, off_screen=True).screenshot(FILE))")


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """A short coupled slider-crank (0.05 revolutions: 37 outputs to t = 2.0944e-3 s)."""
    out = tmp_path_factory.mktemp("crank")
    assert cli.main(["-q", "run", "slider_crank", "--set", "coupled=true", "--set", "revolutions=0.05", "--no-plots",
                     "--no-paraview", "--out", str(out), "--cases", str(ROOT / "cases")]) == 0
    return out


# (arguments after `flexmbs view DIR`, the message after "flexmbs view: error: "); "{dir}": the run's directory
BAD = [
    (["--field", "von_mises"], f"--field must be one of {FIELDS}, got 'von_mises'"),
    (["--field", "stress"], f"--field must be one of {FIELDS}, got 'stress'"),
    (["--time", "1.0", "--screenshot", "a.png"],
     "--time must lie in the run's output times [0, 0.00209440] s, got 1.0".replace("0.00209440", "0.0020944")),
    (["--time", "nan", "--screenshot", "a.png"], "--time must be a finite number [s], got nan"),
    (["--screenshot", "frame.txt"],
     "--screenshot must be a picture file ending in one of ('.png', '.jpg', '.jpeg', '.bmp', '.tif', '.tiff'), "
     "got 'frame.txt'"),
    (["--video", "run.avi"], "--video must be a video file ending in one of ('.gif', '.mp4'), got 'run.avi'"),
    (["--screenshot", "a.png", "--video", "b.gif"],
     "--screenshot and --video: give one (a picture of one output, or a video of the run)"),
    (["--video", "b.gif", "--time", "0.001"],
     "--time: a video shows every output (every N-th with --every); --time picks the frame of --screenshot or the "
     "first frame of the window"),
    (["--video", "b.gif", "--every", "0"], "--every must be a positive integer, got 0"),
    (["--fps", "0", "--screenshot", "a.png"], "--fps must be a number of frames per second in (0, 240], got 0.0"),
    (["--size", "10x10", "--screenshot", "a.png"],
     "--size expects WIDTHxHEIGHT in pixels, each in 16..8192 (e.g. 1024x768), got '10x10'"),
    (["--size", "big", "--screenshot", "a.png"],
     "--size expects WIDTHxHEIGHT in pixels, each in 16..8192 (e.g. 1024x768), got 'big'"),
    (["--clim", "1", "0", "--screenshot", "a.png"], "--clim must be two finite numbers MIN < MAX, got [1.0, 0.0]"),
    (["--scale", "inf", "--screenshot", "a.png"],
     "--scale must be a finite number (the factor on the elastic displacement drawn), got inf"),
    (["--run", "other", "--screenshot", "a.png"],
     "--run must be one of ['coupled'] (the runs in {dir}/results.h5), got 'other'"),
]


@pytest.mark.parametrize("argv, message", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_view_options_name_the_option(argv, message, run_dir, capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "pyvista", None)      # said before pyvista is needed
    assert cli.main(["view", str(run_dir), *argv]) == 2
    out, err = capsys.readouterr()
    assert err == f"flexmbs view: error: {message.replace('{dir}', str(run_dir))}\n"
    assert out == "" and not list(tmp_path.iterdir())                         # nothing written


def test_without_pyvista_the_command_says_what_to_install(run_dir, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyvista", None)
    assert cli.main(["view", str(run_dir), "--screenshot", "never.png"]) == 2
    assert capsys.readouterr().err == f"flexmbs view: error: {NO_PYVISTA}\n"
    assert not Path("never.png").exists()


def test_without_pyvista_results_show_says_what_to_install(run_dir, monkeypatch):
    from flexmbs.sweep import MissingExtra
    res = load_results(run_dir)
    monkeypatch.setitem(sys.modules, "pyvista", None)
    with pytest.raises(MissingExtra) as info:
        res.show()
    assert str(info.value) == NO_PYVISTA


def test_a_video_without_its_writer_says_what_to_install(run_dir, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "imageio_ffmpeg", None)
    monkeypatch.setitem(sys.modules, "imageio", None)
    assert cli.main(["view", str(run_dir), "--video", "run.mp4"]) == 2
    assert capsys.readouterr().err == ("flexmbs view: error: a .mp4 video needs imageio, imageio-ffmpeg, which are "
                                       "not installed; install with: pip install imageio imageio-ffmpeg\n")
    assert cli.main(["view", str(run_dir), "--video", "run.gif"]) == 2
    assert capsys.readouterr().err == ("flexmbs view: error: a .gif video needs imageio, which is not installed; "
                                       "install with: pip install imageio\n")


def test_a_directory_without_results(tmp_path, capsys):
    assert cli.main(["view", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (f"flexmbs view: error: {tmp_path} is a directory without a results.h5 (the "
                                       "results file that `flexmbs run --out DIR` writes); give the results "
                                       "file's path\n")


@pytest.mark.skipif(importlib.util.find_spec("pyvista") is None, reason="needs pyvista (the view extra)")
def test_a_window_without_a_display_says_how_to_render_off_screen(run_dir, capsys, monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr("sys.platform", "linux")
    assert cli.main(["view", str(run_dir)]) == 2
    assert capsys.readouterr().err == f"flexmbs view: error: {NO_DISPLAY}\n"


@pytest.mark.skipif(importlib.util.find_spec("pyvista") is None, reason="needs pyvista (the view extra)")
def test_results_show_without_a_display_says_how_to_render_off_screen(run_dir, monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr("sys.platform", "linux")
    with pytest.raises(RuntimeError) as info:
        load_results(run_dir).show(notebook=False)
    assert str(info.value) == NO_DISPLAY


# (a call of flexmbs.viewer, its message); "res": the run's Results
CALLS = [
    ("Viewer(res, window_size=(800,))", "`window_size` must be two integers WIDTH, HEIGHT in 16..8192 pixels, "
                                        "got (800,)"),
    ("Viewer(res, view='top')", "`view` must be one of ('xy', 'xz', 'yz', 'iso'), got 'top'"),
    ("Viewer(res, field='von_mises')", f"`field` must be one of {FIELDS}, got 'von_mises'"),
    ("Viewer(res, clim=(0, 1, 2))", "`clim` must be two finite numbers MIN < MAX, got (0, 1, 2)"),
    ("Viewer(res.t)", "`results` must be a flexmbs.Results, got ndarray"),
    ("Viewer(Results(t=res.t))", "`results` hold no bodies and no frame motion (a results file written before "
                                 "flexmbs stored them): there is nothing to place in 3D; run the case again"),
    ("Viewer(lost(res))", "`results` have no finite position of a body at any output (status 'finished': "
                          "NaN everywhere): there is nothing to draw"),
    ("camera('iso', [0, 0, 0], [1, 1, 1], 1.0)", "`view` must be one of ('xy', 'xz', 'yz') for a planar camera, "
                                                 "got 'iso'"),
]


def lost(res):
    """``res`` with every body's motion and every joint NaN (as a damaged file's lost outputs)."""
    bodies = {n: b.replace(position=np.full_like(b.position, np.nan)) for n, b in res.bodies.items()}
    return res.replace(bodies=bodies, joints={n: np.full_like(r, np.nan) for n, r in res.joints.items()},
                       message="NaN everywhere")


@pytest.mark.parametrize("call, message", CALLS, ids=[c for c, _ in CALLS])
def test_bad_viewer_arguments(call, message, run_dir, monkeypatch):
    from flexmbs import Results
    from flexmbs.viewer import Viewer, camera
    monkeypatch.setitem(sys.modules, "pyvista", None)
    res = load_results(run_dir)
    with pytest.raises((ValueError, TypeError)) as info:
        eval(call, {"Viewer": Viewer, "camera": camera, "Results": Results, "res": res, "lost": lost})
    assert str(info.value) == message
