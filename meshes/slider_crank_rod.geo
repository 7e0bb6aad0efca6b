// flexmbs sample: the connecting rod of Simeon's slider-crank (cases/slider_crank.py --rod solid),
// a 0.3 m x 8 mm x 8 mm steel bar along x, centred on the x axis, meshed by Gmsh with quadratic
// tetrahedra (Tet10) on a structured grid: 60 x 2 x 2 cells of 5 mm x 4 mm x 4 mm, each split into
// tetrahedra, so that a cross-section of nodes lies at mid-span (x = 0.15 m).
// gmsh -3 slider_crank_rod.geo -format msh41 -o slider_crank_rod.msh
SetFactory("OpenCASCADE");
Box(1) = {0, -0.004, -0.004, 0.3, 0.008, 0.008};
Transfinite Curve{1:8} = 3;                 // the end faces' edges: 2 cells across y and z
Transfinite Curve{9:12} = 61;               // the edges along x (curves 9-12 of the OpenCASCADE box): 60 cells
Transfinite Surface{:};
Transfinite Volume{1};
Mesh.ElementOrder = 2;
Mesh.SecondOrderLinear = 1;                 // straight edges: mid-edge nodes at the midpoints
Physical Volume("rod") = {1};
Physical Surface("bearing_A") = Surface In BoundingBox{-1e-6, -1, -1, 1e-6, 1, 1};
Physical Surface("bearing_B") = Surface In BoundingBox{0.3 - 1e-6, -1, -1, 0.3 + 1e-6, 1, 1};
