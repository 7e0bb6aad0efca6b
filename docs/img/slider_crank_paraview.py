"""How docs/img/slider_crank_paraview.png was made: one frame of the coupled slider-crank's
paraview.xdmf (`flexmbs run slider_crank --set coupled=true`) rendered offscreen with VTK, as
ParaView shows it with Threshold on `body`/`part`, Warp By Vector (displacement x 20) and the
rod coloured by `axial_force`.

    python docs/img/slider_crank_paraview.py out/slider_crank/paraview.xdmf 820 docs/img/slider_crank_paraview.png
"""
import sys
import numpy as np
from vtkmodules.vtkIOXdmf2 import vtkXdmfReader
from vtkmodules.vtkCommonExecutionModel import vtkStreamingDemandDrivenPipeline
from vtkmodules.vtkCommonDataModel import vtkCompositeDataSet
from vtkmodules.vtkFiltersGeneral import vtkWarpVector
from vtkmodules.vtkFiltersCore import vtkThreshold, vtkTubeFilter
from vtkmodules.vtkFiltersGeometry import vtkGeometryFilter
from vtkmodules.vtkFiltersSources import vtkSphereSource
from vtkmodules.vtkFiltersCore import vtkGlyph3D
from vtkmodules.vtkRenderingAnnotation import vtkScalarBarActor
from vtkmodules.vtkRenderingCore import (vtkActor, vtkPolyDataMapper, vtkRenderer, vtkRenderWindow,
                                         vtkWindowToImageFilter, vtkDataSetMapper, vtkTextActor)
from vtkmodules.vtkIOImage import vtkPNGWriter
from vtkmodules.vtkCommonCore import vtkLookupTable
import vtkmodules.vtkRenderingOpenGL2  # noqa
import vtkmodules.vtkRenderingFreeType  # noqa
import vtkmodules.vtkInteractionStyle  # noqa

path, step, png = sys.argv[1], int(sys.argv[2]), sys.argv[3]
r = vtkXdmfReader(); r.SetFileName(path); r.UpdateInformation()
ts = r.GetOutputInformation(0).Get(vtkStreamingDemandDrivenPipeline.TIME_STEPS())
r.UpdateTimeStep(ts[step])
out = r.GetOutputDataObject(0)
names = [out.GetMetaData(b).Get(vtkCompositeDataSet.NAME()) for b in range(out.GetNumberOfBlocks())]
grid = out.GetBlock(names.index("TimeSeries_meshio"))

def part(body, parts):
    th = vtkThreshold(); th.SetInputData(grid)
    th.SetInputArrayToProcess(0, 0, 0, 1, "body"); th.SetLowerThreshold(body); th.SetUpperThreshold(body)
    th.Update()
    th2 = vtkThreshold(); th2.SetInputData(th.GetOutput())
    th2.SetInputArrayToProcess(0, 0, 0, 1, "part"); th2.SetLowerThreshold(parts[0]); th2.SetUpperThreshold(parts[1])
    th2.Update()
    g = vtkGeometryFilter(); g.SetInputData(th2.GetOutput()); g.Update()
    return g.GetOutput()

ren = vtkRenderer(); ren.SetBackground(1, 1, 1)
# rod: warped x 20 by displacement, tube coloured by axial force
rod = part(1, (0, 0))
warp = vtkWarpVector(); warp.SetInputData(rod); warp.SetInputArrayToProcess(0, 0, 0, 0, "displacement")
warp.SetScaleFactor(20.0); warp.Update()
tube = vtkTubeFilter(); tube.SetInputData(warp.GetOutput()); tube.SetRadius(0.006); tube.SetNumberOfSides(16); tube.Update()
m = vtkPolyDataMapper(); m.SetInputData(tube.GetOutput()); m.SetScalarModeToUseCellFieldData(); m.SelectColorArray("axial_force")
rng = tube.GetOutput().GetCellData().GetArray("axial_force").GetRange()
lim = max(abs(rng[0]), abs(rng[1]))
lut = vtkLookupTable(); lut.SetHueRange(0.667, 0.0); lut.Build()
m.SetLookupTable(lut); m.SetScalarRange(-lim, lim); m.ScalarVisibilityOn()
a = vtkActor(); a.SetMapper(m); ren.AddActor(a)
bar = vtkScalarBarActor(); bar.SetLookupTable(m.GetLookupTable()); bar.SetTitle("axial force [N]"); bar.SetNumberOfLabels(3)
bar.GetTitleTextProperty().SetColor(0, 0, 0); bar.GetLabelTextProperty().SetColor(0, 0, 0); bar.SetWidth(0.08); bar.SetHeight(0.6); bar.SetPosition(0.88, 0.2); ren.AddViewProp(bar)
for body, color in ((0, (0.55, 0.55, 0.6)), (2, (0.85, 0.6, 0.3))):
    m = vtkPolyDataMapper(); m.SetInputData(part(body, (0, 0))); m.ScalarVisibilityOff()
    a = vtkActor(); a.SetMapper(m); a.GetProperty().SetColor(*color); a.GetProperty().SetOpacity(0.85); ren.AddActor(a)
    for axis, c in ((1, (1, 0, 0)), (2, (0, 0.6, 0)), (3, (0, 0, 1))):
        m = vtkPolyDataMapper(); m.SetInputData(part(body, (axis, axis))); m.ScalarVisibilityOff()
        a = vtkActor(); a.SetMapper(m); a.GetProperty().SetColor(*c); a.GetProperty().SetLineWidth(3); ren.AddActor(a)
s = vtkSphereSource(); s.SetRadius(0.008); s.SetThetaResolution(16); s.SetPhiResolution(16)
gl = vtkGlyph3D(); gl.SetInputData(part(-1, (4, 4))); gl.SetSourceConnection(s.GetOutputPort()); gl.SetScaleModeToDataScalingOff(); gl.Update()
m = vtkPolyDataMapper(); m.SetInputData(gl.GetOutput()); m.ScalarVisibilityOff()
a = vtkActor(); a.SetMapper(m); a.GetProperty().SetColor(0.1, 0.1, 0.1); ren.AddActor(a)
txt = vtkTextActor(); txt.SetInput(f"t = {1e3 * ts[step]:.2f} ms, crank {np.degrees(150 * ts[step]) % 360:.0f} deg; rod x 20, colour: axial force")
txt.GetTextProperty().SetColor(0, 0, 0); txt.GetTextProperty().SetFontSize(16); txt.SetPosition(10, 10); ren.AddViewProp(txt)
win = vtkRenderWindow(); win.SetOffScreenRendering(1); win.AddRenderer(ren); win.SetSize(800, 400)
ren.ResetCamera(); ren.GetActiveCamera().Zoom(1.6)
win.Render()
w2i = vtkWindowToImageFilter(); w2i.SetInput(win); w2i.Update()
wr = vtkPNGWriter(); wr.SetFileName(png); wr.SetInputConnection(w2i.GetOutputPort()); wr.Write()
print("wrote", png, lim)
